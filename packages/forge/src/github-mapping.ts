/**
 * How the GitHub adapter reads GitHub's answers: a pull request, check runs and reviews in the
 * one vocabulary of `ForgeAdapter`, the GraphQL documents it sends, and what an Octokit error
 * carries (status, message).
 */
import type {
  CheckConclusion,
  CheckState,
  PullRequestState,
  ReviewComment,
  ReviewState,
  ReviewVerdict,
} from "./forge-adapter.ts";
import { parseForgeResponse } from "./forge-response.ts";
import type { GitHubPull } from "./github-schemas.ts";
import {
  GitHubCheckRunsSchema,
  GitHubCombinedStatusSchema,
  GitHubIssueCommentsSchema,
  GitHubReviewsSchema,
} from "./github-schemas.ts";

export const REVIEW_THREADS_QUERY = `query($owner: String!, $repo: String!, $number: Int!) {
  repository(owner: $owner, name: $repo) {
    pullRequest(number: $number) {
      reviewThreads(first: 100) {
        nodes {
          id isResolved path line
          comments(first: 100) { nodes { databaseId author { login } body createdAt } }
        }
      }
    }
  }
}`;

export const AUTO_MERGE_MUTATION = `mutation($id: ID!, $mergeMethod: PullRequestMergeMethod!, $sha: GitObjectID) {
  enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: $mergeMethod, expectedHeadOid: $sha }) {
    pullRequest { autoMergeRequest { mergeMethod } }
  }
}`;

export function toState(pull: GitHubPull): PullRequestState {
  return {
    number: pull.number,
    url: pull.html_url,
    head: pull.head.ref,
    headSha: pull.head.sha,
    base: pull.base.ref,
    title: pull.title,
    body: pull.body ?? "",
    status: pull.merged_at ? "merged" : pull.state,
    mergeCommitSha: pull.merged_at ? pull.merge_commit_sha : null,
    mergedBy: pull.merged_by?.login ?? null,
    mergeable: pull.merged_at || pull.state !== "open" ? null : (pull.mergeable ?? null),
  };
}

function checkRunConclusion(status: string, conclusion: string | null): CheckConclusion {
  if (status !== "completed") return "pending";
  switch (conclusion) {
    case "success":
      return "success";
    case "neutral":
      return "neutral";
    case "skipped":
      return "skipped";
    case "cancelled":
      return "cancelled";
    default:
      return "failure";
  }
}

function reviewVerdict(state: string): ReviewVerdict {
  switch (state) {
    case "APPROVED":
      return "approved";
    case "CHANGES_REQUESTED":
      return "changes_requested";
    case "DISMISSED":
      return "dismissed";
    case "PENDING":
      return "pending";
    default:
      return "commented";
  }
}

export function statusOf(error: unknown): number | null {
  if (typeof error === "object" && error !== null && "status" in error && typeof error.status === "number") {
    return error.status;
  }
  return null;
}

export function isGraphqlError(error: unknown): boolean {
  return typeof error === "object" && error !== null && "errors" in error && Array.isArray(error.errors);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Check runs and commit statuses of one head, as `CheckState`s. */
export function toChecks(runsData: unknown, statusData: unknown): CheckState[] {
  const runs = parseForgeResponse("github", GitHubCheckRunsSchema, runsData, "GET check-runs");
  const combined = parseForgeResponse("github", GitHubCombinedStatusSchema, statusData, "GET status");
  return [
    ...runs.check_runs.map(
      (run): CheckState => ({
        name: run.name,
        conclusion: checkRunConclusion(run.status, run.conclusion),
        url: run.html_url ?? run.details_url,
        source: "check_run",
        jobId: run.app?.slug === "github-actions" ? run.id : null,
      }),
    ),
    ...combined.statuses.map(
      (status): CheckState => ({
        name: status.context,
        conclusion: status.state === "error" ? "failure" : status.state,
        url: status.target_url,
        source: "status",
        jobId: null,
      }),
    ),
  ];
}

export function toReviews(data: unknown): ReviewState[] {
  return parseForgeResponse("github", GitHubReviewsSchema, data, "GET reviews").map((review) => ({
    id: review.id,
    author: review.user?.login ?? "ghost",
    verdict: reviewVerdict(review.state),
    body: review.body,
    commitSha: review.commit_id,
    submittedAt: review.submitted_at ?? null,
  }));
}

export function toComments(data: unknown): ReviewComment[] {
  return parseForgeResponse("github", GitHubIssueCommentsSchema, data, "GET issue comments").map(
    (comment) => ({
      id: comment.id,
      author: comment.user?.login ?? "ghost",
      body: comment.body ?? "",
      createdAt: comment.created_at,
    }),
  );
}
