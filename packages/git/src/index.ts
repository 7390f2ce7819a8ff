export type { ChangedPath, ChangeStatus } from "./changed-paths-parser.ts";
export type { CommitAuthor } from "./commit-identity.ts";
export { buildCommitMessage, STANDARD_TRAILER_ORDER } from "./commit-message-builder.ts";
export {
  type FastForwardPushOptions,
  type FastForwardPushResult,
  fastForwardPush,
} from "./fast-forward-push.ts";
export { acquireFileLock, type FileLock, type FileLockOptions, withFileLock } from "./file-lock.ts";
export { HARDENING_ENV } from "./git-env.ts";
export {
  GitError,
  GitInputError,
  LandRaceError,
  LockTimeoutError,
  redactUrlCredentials,
} from "./git-error.ts";
export { type InitBareRepoOptions, initBareRepo } from "./init-bare-repo.ts";
export {
  DEFAULT_LAND_ATTEMPTS,
  LAND_DEFAULTS,
  LAND_STRATEGIES,
  type LandAttempt,
  type LandBranchOptions,
  type LandBranchResult,
  type LandCheckOutcome,
  type LandStrategy,
  landBranch,
} from "./land-branch.ts";
export { disposeKeptAdmins } from "./linked-worktree.ts";
export { type MergeMainOptions, type MergeMainResult, mergeMainInto } from "./merge-main.ts";
export type { MirrorLayout } from "./mirror-layout.ts";
export { protectedBranchRefusal } from "./protected-branch.ts";
export { type PushBranchOptions, type PushBranchResult, type PushGuard, pushBranch } from "./push-branch.ts";
export { branchNameProblem, checkpointRef, isFullSha } from "./ref-names.ts";
export { parseRemoteLocation, type RemoteLocation } from "./remote-location.ts";
export { createIntegrationBranch, repoKindOf } from "./repo-kind.ts";
export { type AddWorktreeOptions, RepoMirror } from "./repo-mirror.ts";
export {
  REPO_MIRROR_DEFAULTS,
  type RepoMirrorOptions,
  type ResolvedRepoMirrorOptions,
  resolveRepoMirrorOptions,
} from "./repo-mirror-options.ts";
export {
  DEFAULT_GIT_TIMEOUT_MS,
  type GitResult,
  HARDENING_CONFIG,
  type RunGitOptions,
  runGit,
} from "./run-git.ts";
export { type ChangedPathsOptions, type CommitOptions, Worktree } from "./worktree.ts";
