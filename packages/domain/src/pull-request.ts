/**
 * Landing through pull requests (docs/state-machine.md rules 14–20). In `landing.mode:
 * pull_request` a reviewer's approve does not land: the worker pushes the reviewed head to the
 * task's PR branch (`overseer/pr/<task>`, task.ts `pullRequestBranch`), the task becomes
 * `pr_open`, and the coordinator's forge runner reports what the forge says as PR commands.
 * A task is `done` only when its pull request is merged.
 */

/** Where the task's pull request is: asked for (`opening`), open on the forge, merged or closed unmerged. */
export const PULL_REQUEST_STATUSES = ["opening", "open", "merged", "closed"] as const;
export type PullRequestStatus = (typeof PULL_REQUEST_STATUSES)[number];

/** The combined state of the checks reported on the approved head. */
export const PULL_REQUEST_CHECK_STATES = ["pending", "success", "failure"] as const;
export type PullRequestCheckState = (typeof PULL_REQUEST_CHECK_STATES)[number];

/** The human review of the approved head. */
export const PULL_REQUEST_REVIEW_STATES = ["none", "approved", "changes_requested"] as const;
export type PullRequestReviewState = (typeof PULL_REQUEST_REVIEW_STATES)[number];

/** What a task whose pull request was closed unmerged becomes (`landing.pull_request.on_closed`). */
export const PULL_REQUEST_ON_CLOSED = ["cancel", "todo"] as const;
export type PullRequestOnClosed = (typeof PULL_REQUEST_ON_CLOSED)[number];

/**
 * When a prerequisite satisfies its dependents (`landing.pull_request.prerequisites`): once
 * merged (`done`), or already while its pull request is open (`stacked`: the dependent branches
 * from the prerequisite's PR branch and its pull request targets it).
 */
export const PREREQUISITE_MODES = ["merged", "stacked"] as const;
export type PrerequisiteMode = (typeof PREREQUISITE_MODES)[number];

/** The task's pull request as Overseer knows it (table `pull_requests`, migration 0010). */
export interface TaskPullRequest {
  /** The forge's number (GitLab: the merge request iid); null until the forge opened it. */
  readonly number: number | null;
  /** The web page of the pull request; null until opened. */
  readonly url: string | null;
  /** The head branch: `overseer/pr/<task>`. */
  readonly branch: string;
  /** The branch it targets: the landing branch, or a stacked prerequisite's PR branch. */
  readonly base: string;
  /** The approved head the PR branch carries; reports about any other head are stale. */
  readonly headSha: string;
  readonly status: PullRequestStatus;
  readonly checks: PullRequestCheckState;
  readonly review: PullRequestReviewState;
  /** Human approvals of the head. */
  readonly approvals: number;
  /** Failed CI rounds in a row (reset at the `attempts` limit's card). */
  readonly ciFailures: number;
  readonly mergeCommitSha: string | null;
  readonly mergedBy: string | null;
}

/** One failing check of the approved head, with the tail of its log (fetched host-side). */
export interface FailingCheck {
  readonly name: string;
  readonly url: string | null;
  readonly logTail: string;
}

/** One comment of a review thread or of the pull request's conversation. */
export interface PullRequestComment {
  readonly author: string;
  readonly body: string;
}

/**
 * An unresolved review thread on the approved head: the file, the line (null for a file-level
 * comment), the opening comment and its replies, oldest first.
 */
export interface ReviewThread {
  readonly path: string;
  readonly line: number | null;
  readonly comments: readonly PullRequestComment[];
  readonly url?: string | null | undefined;
}

/** The open (or opening) pull request of a task, or null. */
export function openPullRequest(pr: TaskPullRequest | null): TaskPullRequest | null {
  return pr !== null && (pr.status === "opening" || pr.status === "open") ? pr : null;
}
