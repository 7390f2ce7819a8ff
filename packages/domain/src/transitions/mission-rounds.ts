/**
 * A mission's planning rounds (see mission.ts): the next round, continuation when every task
 * is finished, a pause at a bound, and a replan.
 */
import { type MissionBound, type MissionState, PLANNER_ROLE } from "../mission.ts";
import type { ProjectControl } from "../project-state.ts";
import { isActiveRun, type Run } from "../run.ts";
import { newTask, TASK_DEFAULTS, type Task, TERMINAL_TASK_STATUSES } from "../task.ts";
import { cancelTask } from "./cancellation.ts";
import type { Draft } from "./draft.ts";
import { oneLine } from "./text-format.ts";

/** A mission that still plans and continues: started, not completed. */
export function missionOpen(project: ProjectControl): project is ProjectControl & { mission: MissionState } {
  return project.mission !== null && project.mission.evidence === null;
}

/** Creates the next planning task (round + 1) with `feedback` as its handoff. */
export function addPlanningRound(draft: Draft, feedback: string | null): Task {
  const mission = draft.project.mission as MissionState;
  const round = mission.round + 1;
  const id = draft.freshTaskId("MISSION-R");
  const planning = newTask({
    projectId: draft.project.id,
    id,
    stage: mission.stage ?? TASK_DEFAULTS.stage,
    title: `Mission round ${round}: ${round === 1 ? "plan" : "continue"} — ${oneLine(mission.objective, 80)}`,
    body: mission.objective,
    role: PLANNER_ROLE,
    // A planner reads the repository and changes nothing: its plan goes through overseer-agent.
    scope: [".overseer/**"],
    acceptance: [
      "Either a task graph that moves the objective forward, each task small, scoped and testable,",
      "or completion evidence showing the objective is met.",
    ],
    priority: 0,
    kind: "plan",
    feedback,
  });
  draft.addTask(planning);
  draft.project = { ...draft.project, mission: { ...mission, round } };
  if (round > 1) draft.event("mission.continued", { taskId: id, id: null }, { round });
  return planning;
}

/**
 * Continuation: a continuous mission whose tasks are all done or cancelled gets its next
 * planning round, or pauses with a summary once its round limit is reached.
 */
export function continueMission(draft: Draft): void {
  const project = draft.project;
  if (!missionOpen(project) || !project.continuous) return;
  for (const t of draft.tasks.values()) if (!TERMINAL_TASK_STATUSES.has(t.status)) return;
  for (const r of draft.runs.values()) if (isActiveRun(r)) return;
  if (project.mission.round >= project.mission.maxRounds) {
    pauseAtBound(draft, "rounds", `mission round limit (${project.mission.maxRounds}) reached`);
    return;
  }
  addPlanningRound(draft, null);
}

/**
 * Pauses an open mission at a bound. The reason (with the task counts) becomes the project's
 * status reason and is kept on `mission.bound_reached`, so a reader can tell whether the
 * project still stands paused by that bound (docs/state-machine.md, missions).
 */
export function pauseAtBound(draft: Draft, bound: MissionBound, what: string): void {
  const summary = statusCounts(draft);
  const counts = Object.entries(summary)
    .map(([status, n]) => `${n} ${status}`)
    .join(", ");
  const reason = `${what} (tasks: ${counts}); start again to continue`;
  draft.setProjectStatus("paused", reason, undefined, bound);
  draft.event("mission.bound_reached", { taskId: null, id: null }, { bound, reason, summary });
}

/** `escalate --replan`: the task is cancelled (work kept) and a planning round replaces it. */
export function replan(draft: Draft, task: Task, run: Run, reason: string): void {
  cancelTask(draft, task, run.agentId, `replan requested: ${oneLine(reason, 200)}`);
  draft.event("mission.replan_requested", run, { reason });
  const mission = (draft.project as ProjectControl & { mission: MissionState }).mission;
  const open = [...draft.tasks.values()].some(
    (t) => t.kind === "plan" && !TERMINAL_TASK_STATUSES.has(t.status),
  );
  if (open) return; // a planning round is already under way; it will see the cancelled task
  if (mission.round >= mission.maxRounds) {
    pauseAtBound(draft, "rounds", `mission round limit (${mission.maxRounds}) reached at a replan request`);
    return;
  }
  addPlanningRound(
    draft,
    `Replan requested by ${run.agentId} while working on ${task.id} ("${task.title}"), which was cancelled:\n${reason}`,
  );
}

/** How many tasks are in each status (the summary of a pause at a bound). */
export function statusCounts(draft: Draft): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const t of draft.tasks.values()) counts[t.status] = (counts[t.status] ?? 0) + 1;
  return counts;
}
