/**
 * The one interface Overseer speaks to a forge through (GitHub, GitLab, Gitea/Forgejo). Every
 * method is safe to call again after a crash or a retried job: pull requests are found by their
 * head branch and the body marker Overseer owns, never by a number remembered elsewhere, so a
 * second `ensurePullRequest` for the same head updates the first instead of opening another.
 *
 * Words: a "pull request" is GitLab's merge request too; its `number` is GitHub's number,
 * GitLab's `iid` and Gitea's `index`.
 */
import type { ForgeCallCounter } from "./forge-call-counter.ts";

export const FORGE_KINDS = ["github", "gitlab", "gitea"] as const;
export type ForgeKind = (typeof FORGE_KINDS)[number];

export const MERGE_METHODS = ["merge", "squash", "rebase"] as const;
export type MergeMethod = (typeof MERGE_METHODS)[number];

/** What Overseer wants a task's pull request to be. */
export interface PullRequestDraft {
  /** The task branch (`overseer/task/T-1`). */
  readonly head: string;
  /** The branch it merges into (`main`). */
  readonly base: string;
  readonly title: string;
  /** Overseer's part of the body (summary, acceptance criteria, verdict, run links). */
  readonly body: string;
  /** The key of the body marker, unique per task (`task:T-1`); see `pull-request-marker.ts`. */
  readonly marker: string;
  /** Labels added to the pull request (never removed: people may add their own). */
  readonly labels?: readonly string[];
  /**
   * The number of the pull request Overseer already recorded for this head, if any. When no
   * open one is found for the head, that one was closed or merged meanwhile (a job that read
   * the record before): `ensurePullRequest` answers it as the forge has it, never opening a
   * second one.
   */
  readonly number?: number | null;
}

export type PullRequestStatus = "open" | "closed" | "merged";

export interface PullRequestState {
  readonly number: number;
  readonly url: string;
  readonly head: string;
  readonly headSha: string;
  readonly base: string;
  readonly title: string;
  readonly body: string;
  readonly status: PullRequestStatus;
  /** The merge (or squash/rebase result) commit once merged, else `null`. */
  readonly mergeCommitSha: string | null;
  /** Who merged it (login), when the forge says. */
  readonly mergedBy: string | null;
  /**
   * Whether the head merges into the base without a conflict: `false` = a conflict (the base
   * moved), `null` = the forge has not computed it yet (ask again later) or the pull request is
   * not open.
   */
  readonly mergeable: boolean | null;
}

/**
 * A conditional read (HTTP `If-None-Match`): `changed: false` when the resource is as it was at
 * `etag` (GitHub answers 304, which does not count against its rate limit), else its value and
 * the validator to send next time. The validator is opaque to the caller (it may stand for
 * several requests); `null` when the forge gives none, so every read is a full one.
 */
export type ConditionalRead<T> =
  | { readonly changed: false }
  | { readonly changed: true; readonly value: T; readonly etag: string | null };

export interface EnsuredPullRequest {
  readonly pullRequest: PullRequestState;
  /** `created`, `updated` (title/body/base/labels changed) or `unchanged`. */
  readonly outcome: "created" | "updated" | "unchanged";
}

/** A check run, commit status or pipeline job, one vocabulary for all forges. */
export type CheckConclusion = "pending" | "success" | "failure" | "neutral" | "skipped" | "cancelled";

export interface CheckState {
  readonly name: string;
  readonly conclusion: CheckConclusion;
  readonly url: string | null;
  /** Where it comes from: a GitHub check run, a commit status, or a GitLab/Gitea job. */
  readonly source: "check_run" | "status" | "job";
  /** The job whose log `failingLogTail` can read, when the forge has one. */
  readonly jobId: number | null;
}

export type ReviewVerdict = "approved" | "changes_requested" | "commented" | "dismissed" | "pending";

export interface ReviewState {
  readonly id: number;
  readonly author: string;
  readonly verdict: ReviewVerdict;
  readonly body: string;
  /** The head sha the review was given on, when the forge says. */
  readonly commitSha: string | null;
  readonly submittedAt: string | null;
}

export interface ReviewComment {
  readonly id: number;
  readonly author: string;
  readonly body: string;
  readonly createdAt: string;
}

/** An inline review thread: its first comment and every reply, in order. */
export interface ReviewThread {
  readonly id: string;
  readonly path: string;
  /** The line on the pull request's head the thread is on (`null` when outdated). */
  readonly line: number | null;
  readonly resolved: boolean;
  readonly comments: readonly ReviewComment[];
}

export interface MergeRequest {
  readonly method: MergeMethod;
  /** Refuse to merge unless the head is still this sha (the one that was approved and green). */
  readonly sha: string;
  /** The commit title for merge/squash methods, when the forge lets us choose. */
  readonly commitTitle?: string;
}

export type MergeOutcome =
  /** Merged now, with the resulting commit on the base branch. */
  | { readonly kind: "merged"; readonly sha: string }
  /** Handed to the forge's own queue (GitHub auto-merge / merge queue, GitLab merge when pipeline succeeds / merge train). */
  | { readonly kind: "queued" }
  /** The forge refused (not mergeable, head moved, checks required, protection); the message says why. */
  | { readonly kind: "refused"; readonly reason: string };

/** A right the coordinator and workers need on the repository (README: Land through pull requests). */
export type ForgeRight = "read" | "push" | "pull_requests" | "checks_read" | "merge";

export interface TokenRights {
  /** The account the token acts as (Overseer skips its own reviews and comments by it). */
  readonly login: string;
  readonly granted: readonly ForgeRight[];
  readonly missing: readonly ForgeRight[];
  /** One sentence per missing right: what it is for and what to grant. */
  readonly advice: readonly string[];
}

export interface ForgeAdapter {
  readonly kind: ForgeKind;
  /** The counter every HTTP request of this adapter is recorded in (by operation). */
  readonly calls: ForgeCallCounter;
  /** Opens the task's pull request, or updates the open one Overseer owns for this head. */
  ensurePullRequest(draft: PullRequestDraft): Promise<EnsuredPullRequest>;
  /** The newest pull request (any status) for `head` whose body holds `marker`, or `null`. */
  findPullRequest(head: string, marker: string): Promise<PullRequestState | null>;
  getPullRequest(number: number): Promise<PullRequestState>;
  /** Check runs, commit statuses or pipeline jobs of a head sha (the latest of each name). */
  listChecks(sha: string): Promise<readonly CheckState[]>;
  listReviews(number: number): Promise<readonly ReviewState[]>;
  /** Every inline review thread, resolved ones included (filter on `resolved`). */
  listReviewThreads(number: number): Promise<readonly ReviewThread[]>;
  /** Merges now with `method`; never bypasses branch protection. */
  merge(number: number, request: MergeRequest): Promise<MergeOutcome>;
  /** Hands the merge to the forge's own queue (auto-merge, merge queue, merge train). */
  enableAutoMerge(number: number, request: MergeRequest): Promise<MergeOutcome>;
  /** The last `maxBytes` of a failing job's log, or `null` when the forge keeps none for it. */
  failingLogTail(check: CheckState, maxBytes: number): Promise<string | null>;
  /** Which rights the token has on the repository, and what each missing one is for. */
  checkTokenRights(): Promise<TokenRights>;
  /** Closes a pull request without merging (used when a task is cancelled). */
  closePullRequest(number: number): Promise<void>;
  /** `getPullRequest`, unless it is unchanged since `etag` (polling an open pull request). */
  readPullRequest(number: number, etag: string | null): Promise<ConditionalRead<PullRequestState>>;
  /** `listChecks`, unless they are unchanged since `etag`. */
  readChecks(sha: string, etag: string | null): Promise<ConditionalRead<readonly CheckState[]>>;
  /** `listReviews`, unless they are unchanged since `etag`. */
  readReviews(number: number, etag: string | null): Promise<ConditionalRead<readonly ReviewState[]>>;
  /**
   * The pull request's conversation comments (not inline review comments), oldest first, unless
   * unchanged since `etag`. System notes (GitLab) are left out.
   */
  readComments(number: number, etag: string | null): Promise<ConditionalRead<readonly ReviewComment[]>>;
  /** Replies on an inline review thread (Overseer answering it after pushing a fix). */
  replyToThread(number: number, thread: ReviewThread, body: string): Promise<void>;
  /** Adds a comment to the pull request's conversation. */
  addComment(number: number, body: string): Promise<void>;
  /** Retargets the pull request onto `base` (a stacked dependent when its prerequisite merged). */
  setBase(number: number, base: string): Promise<PullRequestState>;
}
