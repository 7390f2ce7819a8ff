/**
 * Steps of the pull-request loop shared by the approve of a run (rule 14) and the forge
 * runner's commands (rules 15–18): opening the record and the feedback an executor gets.
 */
import type { PullRequestLanding } from "../command.ts";
import { DomainError } from "../domain-error.ts";
import {
  type FailingCheck,
  openPullRequest,
  type PullRequestComment,
  type ReviewThread,
  type TaskPullRequest,
} from "../pull-request.ts";
import type { Run } from "../run.ts";
import { pullRequestBranch, type Task } from "../task.ts";
import type { Draft } from "./draft.ts";
import type { CommandOf } from "./handler.ts";
import { deadStack, orphanStacked, pullRequestBase } from "./pull-request-stacks.ts";

/**
 * Rule 14: a fresh reviewer approved in pull_request mode and the worker pushed the reviewed
 * head to the PR branch. The task is `pr_open`; its pull request is asked for (`opening`), or,
 * when one is still open from an earlier round, updated to the new head (same number).
 */
export function requestPullRequest(
  draft: Draft,
  task: Task,
  run: Run,
  command: CommandOf<"approve">,
  landing: PullRequestLanding,
): void {
  const headSha = landing.headSha ?? command.reviewedHead ?? task.branchHead ?? command.landedSha;
  if (headSha === null) {
    throw new DomainError(
      "invalid_transition",
      `Task ${task.id} was approved in pull_request mode without a reviewed head; its pull request needs the approved commit.`,
    );
  }
  if (landing.headSha != null && task.branchHead !== null && landing.headSha !== task.branchHead) {
    throw new DomainError(
      "invalid_transition",
      `The PR branch of ${task.id} carries ${landing.headSha}, but the reviewed head is ${task.branchHead}; only the reviewed head may be proposed.`,
      { pushedHead: landing.headSha, branchHead: task.branchHead },
    );
  }
  const open = openPullRequest(task.pullRequest);
  // Built on a stacked prerequisite's branch that died meanwhile (rule 20): that stays the
  // base, and the card below asks before the closed work is proposed anywhere else.
  const dead = landing.prerequisites === "stacked" ? deadStack(draft.snapshot(), task) : undefined;
  const pullRequest: TaskPullRequest = {
    number: open?.number ?? null,
    url: open?.url ?? null,
    branch: pullRequestBranch(task.id),
    base:
      dead?.pullRequest?.branch ??
      (landing.prerequisites === "stacked"
        ? pullRequestBase(draft.snapshot(), task, landing.base)
        : landing.base),
    headSha,
    status: open?.status ?? "opening",
    checks: "pending",
    review: "none",
    approvals: 0,
    ciFailures: open?.ciFailures ?? 0,
    mergeCommitSha: null,
    mergedBy: null,
  };
  draft.putTask({
    ...task,
    status: "pr_open",
    pullRequest,
    failures: 0,
    notBefore: null,
    statusReason: null,
  });
  draft.event("task.pr_requested", run, {
    branch: pullRequest.branch,
    base: pullRequest.base,
    headSha,
    number: pullRequest.number,
    feedback: command.feedback ?? null,
    executorAgentId: task.executorAgentId,
  });
  if (dead) orphanStacked(draft, dead, task.id);
}

/** What an executor reads after the pull request's checks failed: each check, its link and log tail. */
export function checksFeedback(pr: TaskPullRequest, failing: readonly FailingCheck[]): string {
  const names = failing.map((c) => c.name);
  return [
    `The checks of pull request ${prLabel(pr)} failed on the approved head ${pr.headSha.slice(0, 12)}${names.length > 0 ? `: ${names.join(", ")}` : ""}. Make them pass (the log tails below end where they failed), then submit.`,
    ...failing.map((c) =>
      [
        `## Check ${c.name}${c.url ? ` (${c.url})` : ""}`,
        c.logTail.trim() ? c.logTail.trimEnd() : "(no log)",
      ].join("\n"),
    ),
  ].join("\n\n");
}

/**
 * What an executor reads after human review: every unresolved thread (file, line, the comment
 * and its replies) and every comment addressing Overseer, so the next run answers each one.
 */
export function reviewFeedback(
  pr: TaskPullRequest,
  review: {
    changesRequested: boolean;
    threads: readonly ReviewThread[];
    comments: readonly PullRequestComment[];
  },
): string {
  const intro = `Human review of pull request ${prLabel(pr)} (head ${pr.headSha.slice(0, 12)}) ${review.changesRequested ? "requested changes" : "left comments to answer"}. Address every thread and comment below; your next submit is pushed to the pull request, so say in your commit message how each one was answered.`;
  const threads = review.threads.map((thread, k) => {
    // A thread on the pull request itself (GitLab's "Start a thread") has no path.
    const where = thread.path
      ? `${thread.path}${thread.line !== null ? `:${thread.line}` : ""}`
      : "the pull request";
    const lines = thread.comments.map(
      (c, i) => `${i === 0 ? "- " : "  - reply by "}${c.author}: ${indent(c.body)}`,
    );
    return [`## Thread ${k + 1}: ${where}${thread.url ? ` (${thread.url})` : ""}`, ...lines].join("\n");
  });
  const comments =
    review.comments.length > 0
      ? [
          "## Comments on the pull request",
          ...review.comments.map((c) => `- ${c.author}: ${indent(c.body)}`),
        ].join("\n")
      : "";
  return [intro, ...threads, comments].filter((part) => part !== "").join("\n\n");
}

/** `#12` with its link, or the branch while the forge has not opened it yet. */
export function prLabel(pr: TaskPullRequest): string {
  if (pr.number === null) return `of ${pr.branch}`;
  return `#${pr.number}${pr.url ? ` (${pr.url})` : ""}`;
}

function indent(text: string): string {
  return text.trim().replace(/\n/g, "\n    ");
}
