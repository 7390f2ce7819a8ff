import type { ProjectState } from "./project-state.ts";
import { openPullRequest, type PrerequisiteMode } from "./pull-request.ts";
import { isActiveRun, type RunAction } from "./run.ts";
import type { Task } from "./task.ts";

/**
 * docs/state-machine.md rule 1. A task needs a run when
 * - it is `todo`, its prerequisites are satisfied ({@link prerequisitesSatisfied}), it is
 *   inside the requested stage; or
 * - it is in `review` and no reviewer is running for it;
 * and it has no active run, no pending decision card, and no retry backoff in force.
 * The project must be active.
 */
export function isRunnable(
  state: ProjectState,
  task: Task,
  now: number,
  stage: string | null,
  prerequisites: PrerequisiteMode = "merged",
): boolean {
  if (state.project.status !== "active") return false;
  if (stage !== null && task.stage !== stage) return false;
  if (task.notBefore !== null && task.notBefore > now) return false;
  if (task.status !== "todo" && task.status !== "review") return false;
  if (hasPendingDecision(state, task.id) || hasActiveRun(state, task.id)) return false;
  if (task.status === "todo") return prerequisitesSatisfied(state, task, prerequisites);
  return true;
}

/**
 * Rules 1 and 19: every prerequisite is `done` (an unknown one never is). Stacked
 * (`landing.pull_request.prerequisites: stacked`), one of them may instead be `pr_open` with
 * its pull request open: the task then builds on that pull request's branch
 * (`pullRequestBase`). Two open pull requests cannot both be a base, so it waits for all but one.
 */
export function prerequisitesSatisfied(
  state: ProjectState,
  task: Task,
  mode: PrerequisiteMode = "merged",
): boolean {
  // Its own pull request is open: its work was built on its prerequisites already (between
  // rounds, or retargeted past a cancelled stacked prerequisite, rule 20).
  if (openPullRequest(task.pullRequest) !== null) return true;
  let stacked = 0;
  for (const id of task.prerequisites) {
    const prerequisite = state.tasks.get(id);
    if (prerequisite?.status === "done") continue;
    if (
      mode === "stacked" &&
      prerequisite?.status === "pr_open" &&
      openPullRequest(prerequisite.pullRequest) !== null &&
      stacked++ === 0
    )
      continue;
    return false;
  }
  return true;
}

export function hasActiveRun(state: ProjectState, taskId: string): boolean {
  for (const run of state.runs.values()) if (run.taskId === taskId && isActiveRun(run)) return true;
  return false;
}

export function hasPendingDecision(state: ProjectState, taskId: string): boolean {
  for (const d of state.decisions.values()) if (d.itemId === taskId && d.status === "pending") return true;
  return false;
}

export function activeRunCount(state: ProjectState): number {
  let n = 0;
  for (const run of state.runs.values()) if (isActiveRun(run)) n++;
  return n;
}

/** The action a runnable task's next run performs. */
export function nextAction(task: Task): RunAction {
  if (task.status === "review") return "review";
  return task.kind === "resolver" ? "resolve" : "execute";
}

const collator = new Intl.Collator("en", { numeric: true });

/**
 * Order of runnable tasks: resolvers first, then work already under review (finish before
 * starting more), then priority (higher first), then stage, then id (natural order, so
 * S00-2 precedes S00-10).
 */
export function compareRunnable(a: Task, b: Task): number {
  return (
    rank(a.kind === "resolver") - rank(b.kind === "resolver") ||
    rank(a.status === "review") - rank(b.status === "review") ||
    b.priority - a.priority ||
    collator.compare(a.stage, b.stage) ||
    collator.compare(a.id, b.id)
  );
}

function rank(first: boolean): number {
  return first ? 0 : 1;
}

/** Runnable tasks in scheduling order. */
export function runnableTasks(
  state: ProjectState,
  now: number,
  stage: string | null = state.project.stage,
  prerequisites: PrerequisiteMode = "merged",
): Task[] {
  return [...state.tasks.values()]
    .filter((t) => isRunnable(state, t, now, stage, prerequisites))
    .sort(compareRunnable);
}

/** Rule 13 (dry run): the first runnable task, or null. Pure: assigns nothing. */
export function firstRunnable(state: ProjectState, now: number, stage: string | null = null): Task | null {
  return runnableTasks(state, now, stage)[0] ?? null;
}

/** Earliest retry backoff still in force, so a scheduler can wake exactly then. */
export function nextWakeAt(state: ProjectState, now: number): number | null {
  let at: number | null = null;
  for (const t of state.tasks.values()) {
    if (t.notBefore !== null && t.notBefore > now && (at === null || t.notBefore < at)) at = t.notBefore;
  }
  return at;
}
