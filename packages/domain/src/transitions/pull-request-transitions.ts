/**
 * The forge runner's commands about a task's pull request (docs/state-machine.md rules 15–18).
 * Each is idempotent: a report about another head than the approved one, about a pull request
 * no longer open, or one that changes nothing recorded is `already_applied`.
 */
import { DomainError } from "../domain-error.ts";
import { openPullRequest, type TaskPullRequest } from "../pull-request.ts";
import { isActiveRun } from "../run.ts";
import { type Task, TERMINAL_TASK_STATUSES } from "../task.ts";
import type { ApplyResult } from "./apply-result.ts";
import { cancelRun, cancelTask, cancelWithOriginal } from "./cancellation.ts";
import { awaitInput, pendingDecisionOf } from "./decision-cards.ts";
import type { Draft } from "./draft.ts";
import type { CommandOf } from "./handler.ts";
import { failLanding } from "./landing-failure.ts";
import { unblockOriginal } from "./outcome-steps.ts";
import { orphanStacked } from "./pull-request-stacks.ts";
import { checksFeedback, prLabel, reviewFeedback } from "./pull-request-steps.ts";

/** Rule 15: the forge opened (or found) the pull request of the approved head. */
export function prOpened(draft: Draft, command: CommandOf<"pr-opened">): ApplyResult {
  const task = draft.task(command.taskId);
  const pr = openPullRequest(recordOf(task));
  if (!pr || pr.headSha !== command.headSha) return draft.alreadyApplied();
  if (pr.status === "open" && pr.number === command.number && pr.url === command.url)
    return draft.alreadyApplied();
  putRecord(draft, task, { ...pr, status: "open", number: command.number, url: command.url });
  draft.event("pr.opened", subject(task), {
    number: command.number,
    url: command.url,
    headSha: pr.headSha,
    branch: pr.branch,
    base: pr.base,
  });
  return draft.result("applied");
}

/**
 * Rule 16: the checks of the approved head. Green is recorded; red sends the task back to an
 * executor with each failing check's name, link and log tail, or after `attempts` red rounds in
 * a row asks an operator on a card that links them.
 */
export function prChecks(draft: Draft, command: CommandOf<"pr-checks">): ApplyResult {
  const { task, pr } = reviewable(draft, command.taskId, command.headSha) ?? {};
  if (!task || !pr || pr.checks === command.state) return draft.alreadyApplied();
  if (command.state !== "failure") {
    // Green ends a row of red rounds: the next red one is the first again.
    const ciFailures = command.state === "success" ? 0 : pr.ciFailures;
    putRecord(draft, task, { ...pr, checks: command.state, ciFailures });
    draft.event(command.state === "success" ? "pr.checks_passed" : "pr.checks_pending", subject(task), {
      number: pr.number,
      headSha: pr.headSha,
    });
    return draft.result("applied");
  }
  const ciFailures = pr.ciFailures + 1;
  const failed = { ...pr, checks: "failure" as const, ciFailures };
  draft.event("pr.checks_failed", subject(task), {
    number: pr.number,
    headSha: pr.headSha,
    failing: command.failing.map((c) => ({ name: c.name, url: c.url })),
    attempt: ciFailures,
    maxAttempts: command.maxAttempts,
  });
  const next: Task = {
    ...task,
    status: "todo",
    pullRequest: failed,
    feedback: checksFeedback(pr, command.failing),
    failures: 0,
    notBefore: null,
    statusReason: null,
  };
  if (ciFailures < command.maxAttempts) {
    draft.putTask(next);
    return draft.result("applied");
  }
  const names = command.failing.map((c) => c.name).join(", ") || "its checks";
  const reason = `The checks of ${task.id}'s pull request ${prLabel(pr)} failed ${ciFailures} times in a row (last: ${names}).`;
  awaitInput(draft, { ...next, pullRequest: { ...failed, ciFailures: 0 } }, "todo", "other", {
    title: "Pull request checks keep failing",
    reason,
    question: `${reason} Answer to send it to a new executor with your answer and the failing logs in its prompt, fix CI yourself and continue, or stop it.`,
    evidence: [
      ...(pr.url
        ? [{ label: `Pull request #${pr.number}`, path: pr.url, summary: `${pr.branch} → ${pr.base}` }]
        : []),
      ...command.failing.map((c) => ({
        label: `Check ${c.name}`,
        path: c.url ?? "",
        summary: lastLine(c.logTail),
      })),
    ],
  });
  return draft.result("applied");
}

/**
 * Rule 17: human review of the approved head. Changes requested, an unresolved thread or a
 * comment addressing Overseer send the task back to an executor with every one of them;
 * otherwise the approvals are recorded (`pr.approved` once they reach the required number).
 */
export function prReview(draft: Draft, command: CommandOf<"pr-review">): ApplyResult {
  const { task, pr } = reviewable(draft, command.taskId, command.headSha) ?? {};
  if (!task || !pr) return draft.alreadyApplied();
  const approvals = Math.max(0, Math.trunc(command.approvals));
  const approved = approvals >= command.requiredApprovals;
  const needsWork = command.changesRequested || command.threads.length > 0 || command.comments.length > 0;
  if (needsWork) {
    const recorded: TaskPullRequest = {
      ...pr,
      approvals,
      review: command.changesRequested ? "changes_requested" : approved ? "approved" : "none",
    };
    draft.putTask({
      ...task,
      status: "todo",
      pullRequest: recorded,
      feedback: reviewFeedback(pr, command),
      failures: 0,
      notBefore: null,
      statusReason: null,
    });
    draft.event("pr.changes_requested", subject(task), {
      number: pr.number,
      headSha: pr.headSha,
      changesRequested: command.changesRequested,
      threads: command.threads.length,
      comments: command.comments.length,
      approvals,
    });
    return draft.result("applied");
  }
  const review = approved ? "approved" : "none";
  if (pr.approvals === approvals && pr.review === review) return draft.alreadyApplied();
  putRecord(draft, task, { ...pr, approvals, review });
  const data = { number: pr.number, headSha: pr.headSha, approvals, required: command.requiredApprovals };
  draft.event(
    approved && pr.review !== "approved" ? "pr.approved" : "pr.review_updated",
    subject(task),
    data,
  );
  return draft.result("applied");
}

/**
 * Rule 18: merged, by anyone. The task is done with the merge commit recorded; whatever still
 * ran for it ends; a merged resolver unblocks its original; stacked pull requests on its branch
 * now target its base.
 */
export function prMerged(draft: Draft, command: CommandOf<"pr-merged">): ApplyResult {
  const task = draft.task(command.taskId);
  const pr = recordOf(task);
  if (pr.status === "merged") return draft.alreadyApplied();
  const merged: TaskPullRequest = {
    ...pr,
    status: "merged",
    mergeCommitSha: command.mergeCommitSha,
    mergedBy: command.mergedBy,
  };
  const by = command.mergedBy ?? "the forge";
  draft.event("pr.merged", subject(task), {
    number: pr.number,
    mergeCommitSha: command.mergeCommitSha,
    mergedBy: command.mergedBy,
    headSha: pr.headSha,
    base: pr.base,
  });
  if (TERMINAL_TASK_STATUSES.has(task.status)) {
    // Cancelled before the merge: the merge is recorded; the task stays as the operator left it.
    putRecord(draft, task, merged);
    return draft.result("applied");
  }
  const reason = `its pull request ${prLabel(pr)} was merged by ${by}`;
  for (const run of draft.runs.values())
    if (run.taskId === task.id && isActiveRun(run)) cancelRun(draft, run, reason);
  const pending = pendingDecisionOf(draft, task.id);
  if (pending)
    draft.resolveCard(pending, "continue", reason, by, pending.resolutionId ?? draft.ctx.newRunId());
  for (const child of draft.tasks.values()) {
    if (child.parentId === task.id && child.kind === "resolver" && !TERMINAL_TASK_STATUSES.has(child.status))
      cancelTask(draft, child, by, `its original ${task.id} is done: ${reason}`);
  }
  draft.putTask({
    ...draft.task(task.id),
    status: "done",
    pullRequest: merged,
    statusReason: null,
    awaitingReason: null,
    blockedBy: null,
    returnTo: null,
    landing: null,
    landingFailures: 0,
    failures: 0,
    notBefore: null,
  });
  draft.event("task.approved", subject(task), {
    landedSha: command.mergeCommitSha,
    landedBranch: pr.base,
    pullRequest: pr.number,
    executorAgentId: task.executorAgentId,
  });
  unblockOriginal(draft, task, null, null);
  retargetStacked(draft, pr);
  return draft.result("applied");
}

/**
 * Rule 18: closed unmerged. With `on_closed: cancel` the task is cancelled; with `todo` a
 * task waiting on the pull request goes back to an executor. A task already cancelled only
 * records it.
 */
export function prClosed(draft: Draft, command: CommandOf<"pr-closed">): ApplyResult {
  const task = draft.task(command.taskId);
  const pr = recordOf(task);
  if (pr.status === "merged" || pr.status === "closed") return draft.alreadyApplied();
  const by = command.closedBy ?? "the forge";
  putRecord(draft, task, { ...pr, status: "closed" });
  draft.event("pr.closed", subject(task), {
    number: pr.number,
    closedBy: command.closedBy ?? null,
    onClosed: command.onClosed,
  });
  const reason = `its pull request ${prLabel(pr)} was closed unmerged by ${by}`;
  if (TERMINAL_TASK_STATUSES.has(task.status)) {
    orphanStacked(draft, draft.task(task.id));
    return draft.result("applied");
  }
  if (command.onClosed === "cancel") {
    cancelWithOriginal(draft, draft.task(task.id), by, reason);
  } else if (task.status === "pr_open") {
    draft.putTask({
      ...draft.task(task.id),
      status: "todo",
      feedback: `Pull request ${prLabel(pr)} was closed unmerged by ${by}. Continue the task: your next approved submit opens a new pull request.`,
      failures: 0,
      notBefore: null,
    });
  }
  // Rule 20: pull requests stacked on its branch lost their base if it is cancelled now.
  orphanStacked(draft, draft.task(task.id));
  return draft.result("applied");
}

/** Rule 18: the base moved and the approved head no longer merges: the landing-failure path (rule 3). */
export function prConflict(draft: Draft, command: CommandOf<"pr-conflict">): ApplyResult {
  const { task, pr } = reviewable(draft, command.taskId, command.headSha) ?? {};
  if (!task || !pr) return draft.alreadyApplied();
  failLanding(
    draft,
    task,
    subject(task),
    {
      reason: "conflict",
      files: command.files,
      details: command.details ?? "",
      branch: pr.base,
      maxAttempts: command.maxAttempts,
    },
    { pullRequest: pr.number, headSha: pr.headSha },
  );
  return draft.result("applied");
}

/** The task's record; a command about a task that never had a pull request is refused. */
function recordOf(task: Task): TaskPullRequest {
  if (task.pullRequest === null) {
    throw new DomainError(
      "invalid_transition",
      `Task ${task.id} has no pull request; pull request reports apply only to a task approved in pull_request mode.`,
      { status: task.status },
    );
  }
  return task.pullRequest;
}

/** Task and pull request when the task waits on its open pull request at exactly `headSha`. */
function reviewable(
  draft: Draft,
  taskId: string,
  headSha: string,
): { task: Task; pr: TaskPullRequest } | undefined {
  const task = draft.task(taskId);
  const pr = openPullRequest(recordOf(task));
  if (task.status !== "pr_open" || !pr || pr.headSha !== headSha) return undefined;
  return { task, pr };
}

function putRecord(draft: Draft, task: Task, pullRequest: TaskPullRequest): void {
  draft.putTask({ ...draft.task(task.id), pullRequest });
}

/** Stacked pull requests on the merged one's branch now target its base (rule 19). */
function retargetStacked(draft: Draft, merged: TaskPullRequest): void {
  for (const dependent of draft.tasks.values()) {
    const open = openPullRequest(dependent.pullRequest);
    if (!open || open.base !== merged.branch) continue;
    draft.putTask({ ...dependent, pullRequest: { ...open, base: merged.base } });
    draft.event("pr.retarget_requested", subject(dependent), {
      number: open.number,
      from: merged.branch,
      to: merged.base,
    });
  }
}

function subject(task: Task): { taskId: string; id: null } {
  return { taskId: task.id, id: null };
}

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  const last = lines[lines.length - 1] ?? "";
  return last.length > 200 ? `${last.slice(0, 199)}…` : last;
}
