/** Cancelling tasks and runs (operator cancel and stop, a project stop, a replan). */
import { STOP_OPTION_ID } from "../decision.ts";
import { DomainError } from "../domain-error.ts";
import { openPullRequest } from "../pull-request.ts";
import { isActiveRun, type Run } from "../run.ts";
import { type Task, TERMINAL_TASK_STATUSES } from "../task.ts";
import { awaitInput, pendingDecisionOf } from "./decision-cards.ts";
import type { Draft } from "./draft.ts";
import { orphanStacked } from "./pull-request-stacks.ts";

/** Rule 12: cancel the item (and the blocked originals waiting on it), keep its work, continuous off. */
export function stopItem(draft: Draft, task: Task, by: string): void {
  if (TERMINAL_TASK_STATUSES.has(task.status)) {
    throw new DomainError("invalid_transition", `Task ${task.id} is already ${task.status}.`);
  }
  refuseIfLanded(draft, task);
  let current: Task | undefined = task;
  while (current) {
    cancelTask(draft, current, by, "stopped by operator; its work is kept on its branch");
    const parent: Task | undefined = current.parentId ? draft.tasks.get(current.parentId) : undefined;
    current = parent && parent.status === "blocked" && parent.blockedBy === current.id ? parent : undefined;
  }
  if (draft.project.continuous) draft.project = { ...draft.project, continuous: false };
}

/**
 * A review run whose landing push went through is recorded with its `approve` while it still
 * runs (the worker's run fence, in the transaction around the push): the work is on the
 * landing branch, so its task can no longer be cancelled or stopped; the run's result
 * finishes it.
 */
export function refuseIfLanded(draft: Draft, task: Task): void {
  for (const run of draft.runs.values()) {
    if (run.taskId !== task.id || !isActiveRun(run) || run.transition !== "approve") continue;
    throw new DomainError(
      "invalid_transition",
      `Task ${task.id}'s approved work has already landed (run ${run.id} pushed it); it can no longer be cancelled and is done once that run's result is applied.`,
      { runId: run.id, status: task.status },
    );
  }
}

export function cancelTask(draft: Draft, task: Task, by: string, reason: string): void {
  const current = draft.task(task.id);
  draft.putTask({ ...current, status: "cancelled", statusReason: reason, notBefore: null });
  for (const run of draft.runs.values())
    if (run.taskId === task.id && isActiveRun(run)) cancelRun(draft, run, reason);
  const pending = pendingDecisionOf(draft, task.id);
  if (pending)
    draft.resolveCard(pending, STOP_OPTION_ID, reason, by, pending.resolutionId ?? draft.ctx.newRunId());
  draft.event("task.cancelled", { taskId: task.id, id: null }, { by, reason });
  // Its pull request is still open on the forge: the coordinator closes it (the forge's
  // `pr-closed` then records it closed).
  const open = openPullRequest(current.pullRequest);
  if (open)
    draft.event(
      "pr.close_requested",
      { taskId: task.id, id: null },
      { number: open.number, branch: open.branch, by, reason },
    );
  // Its pull request was closed before (`on_closed: todo`): pull requests stacked on its
  // branch lost their base now (rule 20).
  orphanStacked(draft, draft.task(task.id));
  // A cancelled task's open resolvers have nothing left to unblock: no continuation.
  for (const child of draft.tasks.values()) {
    if (
      child.parentId === task.id &&
      child.kind === "resolver" &&
      !TERMINAL_TASK_STATUSES.has(child.status)
    ) {
      cancelTask(draft, child, by, `its original ${task.id} was cancelled`);
    }
  }
}

export function cancelRun(draft: Draft, run: Run, reason: string): void {
  draft.putRun({ ...run, status: "cancelled", failure: reason });
  draft.event("run.cancelled", run, { reason });
}

/** Cancels a task; a blocked original its resolver was working for asks the operator how to go on. */
export function cancelWithOriginal(draft: Draft, task: Task, by: string, reason: string): void {
  cancelTask(draft, task, by, reason);
  const parent = task.parentId ? draft.tasks.get(task.parentId) : undefined;
  if (parent && parent.status === "blocked" && parent.blockedBy === task.id) {
    awaitInput(draft, { ...parent, blockedBy: null }, parent.returnTo ?? "todo", "other", {
      title: `Resolver ${task.id} was cancelled`,
      reason: `The resolver working on this task's blocker was cancelled by ${by}.`,
      question: `How should ${parent.id} continue now that its resolver ${task.id} is cancelled?`,
    });
  }
}
