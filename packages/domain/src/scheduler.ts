import type { ProjectState } from "./project-state.ts";
import { isActiveRun, type RunAction } from "./run.ts";
import type { Task } from "./task.ts";

/**
 * docs/state-machine.md rule 1. A task needs a run when
 * - it is `todo`, every prerequisite is `done`, it is inside the requested stage; or
 * - it is in `review` and no reviewer is running for it;
 * and it has no active run, no pending decision card, and no retry backoff in force.
 * The project must be active.
 */
export function isRunnable(state: ProjectState, task: Task, now: number, stage: string | null): boolean {
  if (state.project.status !== "active") return false;
  if (stage !== null && task.stage !== stage) return false;
  if (task.notBefore !== null && task.notBefore > now) return false;
  if (task.status !== "todo" && task.status !== "review") return false;
  if (hasPendingDecision(state, task.id) || hasActiveRun(state, task.id)) return false;
  if (task.status === "todo") {
    return task.prerequisites.every((id) => state.tasks.get(id)?.status === "done");
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
): Task[] {
  return [...state.tasks.values()].filter((t) => isRunnable(state, t, now, stage)).sort(compareRunnable);
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
