export type {
  CheckConclusion,
  CheckState,
  ConditionalRead,
  EnsuredPullRequest,
  ForgeAdapter,
  ForgeKind,
  ForgeRight,
  MergeMethod,
  MergeOutcome,
  MergeRequest,
  PullRequestDraft,
  PullRequestState,
  PullRequestStatus,
  ReviewComment,
  ReviewState,
  ReviewThread,
  ReviewVerdict,
  TokenRights,
} from "./forge-adapter.ts";
export { FORGE_KINDS, MERGE_METHODS } from "./forge-adapter.ts";
export { createForgeAdapter, type ForgeConnection, githubApiUrl } from "./forge-adapter-factory.ts";
export { ForgeCallCounter } from "./forge-call-counter.ts";
export { ForgeError, type ForgeErrorCode } from "./forge-errors.ts";
export type { GitHubAuth } from "./github-adapter.ts";
export { hasMarker, withMarkedContent } from "./pull-request-marker.ts";
export { RETRY_POLICY_DEFAULTS, type RetryPolicy } from "./retrying-fetch.ts";
export { FORGE_RIGHTS, RIGHT_GRANTS, rightsAdvice } from "./token-rights.ts";
