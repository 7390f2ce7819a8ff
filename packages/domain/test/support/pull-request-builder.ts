/** Builders of the pull-request rule tests (rules 14–20): states with a task's pull request open. */
import type { Command, ProjectState, PullRequestLanding, TaskPullRequest } from "../../src/index.ts";
import { pullRequestBranch } from "../../src/index.ts";
import { claimFor, type Driver, getTask, toReview } from "./state-builder.ts";

export const HEAD = "c0ffee";

/** claim → submit → claim → approve in pull_request mode: `taskId` ends pr_open. */
export function toPrOpen(d: Driver, state: ProjectState, taskId: string, base = "main"): ProjectState {
  const reviewed = toReview(d, state, taskId);
  const review = claimFor(d, reviewed.state, taskId);
  return d.apply(review.state, {
    kind: "approve",
    runId: review.run.id,
    feedback: "looks right",
    landedSha: HEAD,
    landedBranch: pullRequestBranch(taskId),
    reviewedHead: HEAD,
    pullRequest: { base },
  });
}

export function opened(d: Driver, state: ProjectState, taskId: string, number = 7): ProjectState {
  return d.apply(state, {
    kind: "pr-opened",
    taskId,
    number,
    url: `https://forge.test/o/r/pull/${number}`,
    headSha: HEAD,
  });
}

export function prOf(state: ProjectState, taskId: string): TaskPullRequest {
  const pr = getTask(state, taskId).pullRequest;
  if (pr === null) throw new Error(`test: ${taskId} has no pull request`);
  return pr;
}

export const checks = (
  taskId: string,
  state: "pending" | "success" | "failure",
  fields: Partial<Extract<Command, { kind: "pr-checks" }>> = {},
): Command => ({
  kind: "pr-checks",
  taskId,
  headSha: HEAD,
  state,
  failing:
    state === "failure"
      ? [{ name: "unit", url: "https://ci.test/job/1", logTail: "expected 2, got 3\nFAIL unit" }]
      : [],
  maxAttempts: 3,
  ...fields,
});

export const review = (
  taskId: string,
  fields: Partial<Extract<Command, { kind: "pr-review" }>> = {},
): Command => ({
  kind: "pr-review",
  taskId,
  headSha: HEAD,
  approvals: 0,
  changesRequested: false,
  threads: [],
  comments: [],
  requiredApprovals: 1,
  ...fields,
});

export function toPrOpenFromReview(
  d: Driver,
  s: ProjectState,
  taskId: string,
  pullRequest: PullRequestLanding,
): ProjectState {
  const rev = claimFor(d, s, taskId);
  return d.apply(rev.state, {
    kind: "approve",
    runId: rev.run.id,
    landedSha: HEAD,
    landedBranch: pullRequestBranch(taskId),
    reviewedHead: HEAD,
    pullRequest,
  });
}
