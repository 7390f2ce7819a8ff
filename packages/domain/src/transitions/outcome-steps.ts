/** Steps shared by the run outcomes of work tasks and of a mission's planning tasks. */
import { DomainError } from "../domain-error.ts";
import type { Run, RunAction } from "../run.ts";
import type { Task } from "../task.ts";
import type { Draft } from "./draft.ts";

/** The task an executor's submission leaves: in review at its new head, feedback and retry state cleared. */
export function inReview(task: Task, run: Run, branchHead: string | null): Task {
  return {
    ...task,
    status: "review",
    executorAgentId: run.agentId,
    branchHead: branchHead ?? task.branchHead,
    feedback: null,
    landing: null,
    failures: 0,
    notBefore: null,
    statusReason: null,
  };
}

/** A reviewer approved the task: it is done, and `task.approved` names its executor. */
export function markApproved(
  draft: Draft,
  task: Task,
  run: Run,
  approval: { feedback: string | null; landedSha: string | null; landedBranch: string | null },
): void {
  draft.putTask({
    ...task,
    status: "done",
    failures: 0,
    notBefore: null,
    statusReason: null,
    landingFailures: 0,
  });
  draft.event("task.approved", run, { ...approval, executorAgentId: task.executorAgentId });
}

export function requireAction(run: Run, allowed: readonly RunAction[], transition: string): void {
  if (!allowed.includes(run.action)) {
    throw new DomainError(
      "invalid_transition",
      `A ${run.action} run cannot ${transition}; expected one of: ${allowed.map((a) => `${a} run`).join(", ")}.`,
      { action: run.action, transition },
    );
  }
}

/**
 * Rule 5: only a done resolver unblocks its original, which returns to where it left from
 * (todo, or review with a new reviewer). `runId` names the run (or null: a merged pull request).
 */
export function unblockOriginal(
  draft: Draft,
  resolver: Task,
  runId: string | null,
  notes: string | null,
): void {
  const parent =
    resolver.kind === "resolver" && resolver.parentId ? draft.tasks.get(resolver.parentId) : undefined;
  if (parent?.status !== "blocked" || parent.blockedBy !== resolver.id) return;
  const returnTo = parent.returnTo ?? "todo";
  draft.putTask({
    ...parent,
    status: returnTo,
    blockedBy: null,
    returnTo: null,
    statusReason: null,
    feedback: `Blocker resolved by ${resolver.id} (${resolver.title}).${notes ? ` Reviewer notes: ${notes}` : ""}`,
  });
  draft.event(
    "task.unblocked",
    { taskId: parent.id, id: runId },
    { resolverId: resolver.id, status: returnTo },
  );
}
