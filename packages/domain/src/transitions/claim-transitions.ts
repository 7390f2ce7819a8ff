/**
 * Claim (rule 1, the scheduler's tick): a continuous mission plans its next round, then the
 * runnable tasks get runs up to the project's free slots and its session budget.
 */
import type { ProjectState } from "../project-state.ts";
import type { PrerequisiteMode } from "../pull-request.ts";
import type { Run } from "../run.ts";
import { activeRunCount, nextAction, runnableTasks } from "../scheduler.ts";
import { type ApplyResult, changesNothing } from "./apply-result.ts";
import { Draft } from "./draft.ts";
import type { CommandOf } from "./handler.ts";
import { continueMission, missionOpen, pauseAtBound, statusCounts } from "./mission-rounds.ts";

/** Claims for the command's stage, or the stage the project was started with. */
export function claim(draft: Draft, command: CommandOf<"claim">): ApplyResult {
  claimRuns(draft, command.stage ?? draft.project.stage, command.prerequisites ?? "merged");
  return draft.result("applied");
}

/**
 * A claim's dry run: true when claiming on `state` at `now` would change nothing (nothing
 * runnable, no free slot, no mission round or bound to record), so a scheduler that knows
 * `state` is the project's whole current state can leave the claim's transaction out. Pure.
 */
export function claimChangesNothing(state: ProjectState, command: CommandOf<"claim">, now: number): boolean {
  // The ids a dry run draws are thrown away, but each must be new: a claim of several runs
  // mints an agent id per run until it is unused, so one constant id would never end.
  let drawn = 0;
  const next = () => (++drawn).toString(16).padStart(12, "0");
  const ctx = { now, randomHex: next, newRunId: () => `dry-run-${next()}` };
  return changesNothing(claim(new Draft(state, ctx), command));
}

function claimRuns(draft: Draft, stage: string | null, prerequisites: PrerequisiteMode): void {
  const project = draft.project;
  if (project.status !== "active") return;
  continueMission(draft);
  if (draft.project.status !== "active") return;
  const state = draft.snapshot();
  const candidates = runnableTasks(state, draft.ctx.now, stage, prerequisites);
  if (candidates.length === 0) return;
  let free = project.concurrency - activeRunCount(state);
  for (const task of candidates) {
    if (free <= 0) break;
    const p = draft.project;
    if (p.sessionsLimit !== null && p.sessionsUsed >= p.sessionsLimit) {
      if (activeRunCount(draft.snapshot()) === 0) {
        if (missionOpen(p)) pauseAtBound(draft, "sessions", `max_sessions (${p.sessionsLimit}) reached`);
        else
          draft.setProjectStatus(
            "paused",
            `max_sessions (${p.sessionsLimit}) reached; start again to continue`,
            undefined,
            "sessions",
          );
        draft.event(
          "project.sessions_exhausted",
          { taskId: null, id: null },
          {
            sessionsLimit: p.sessionsLimit,
            summary: statusCounts(draft),
          },
        );
      }
      return;
    }
    const action = nextAction(task);
    const run: Run = {
      id: draft.ctx.newRunId(),
      projectId: task.projectId,
      taskId: task.id,
      agentId: draft.mintAgentId(action, task),
      action,
      attempt: task.failures + 1,
      status: "queued",
      transition: null,
      failure: null,
      notBefore: null,
      createdAt: draft.ctx.now,
      workerId: null,
      startedAt: null,
    };
    draft.addRun(run);
    if (task.status === "todo") draft.putTask({ ...task, status: "in_progress", notBefore: null });
    else if (task.notBefore !== null) draft.putTask({ ...task, notBefore: null });
    draft.project = { ...draft.project, sessionsUsed: draft.project.sessionsUsed + 1 };
    draft.event("run.queued", run, { action, agentId: run.agentId, attempt: run.attempt });
    free--;
  }
}
