import { DEFAULT_LOCK_STALE_MS, DEFAULT_LOCK_TIMEOUT_MS } from "./file-lock.ts";
import { GitInputError } from "./git-error.ts";
import { DEFAULT_GIT_TIMEOUT_MS } from "./run-git.ts";

export interface RepoMirrorOptions {
  /** The worker's data directory; mirrors live in `<dataDir>/mirrors/`. */
  dataDir: string;
  /** Project slug; names the mirror directory. Letters, digits, `.`, `_`, `-`. */
  projectId: string;
  /** The project's repository: a local path (bare or not) or any URL git can fetch and push. */
  remote: string;
  /** A mirror lock not refreshed for this long is considered abandoned. Default 30 000 ms. */
  lockStaleMs?: number;
  /** Longest wait for a mirror lock before failing. Default 900 000 ms (15 min). */
  lockTimeoutMs?: number;
  /** Bound on one clone, fetch or push. Default 600 000 ms (10 min). */
  networkTimeoutMs?: number;
  /** Bound on one local git command (checkout, diff, commit, merge). Default 300 000 ms (5 min). */
  gitTimeoutMs?: number;
  /**
   * Read the host's system/global git config for commands that talk to the remote (clone,
   * fetch, push, ls-remote), e.g. to use its credential helper. The hardening flags still win.
   * Default `false`.
   */
  hostGitConfig?: boolean;
  /**
   * Let `ensure()`'s fetch run git's auto-maintenance (gc when loose objects pile up), inside the
   * mirror lock. Per-job commands never run it. Default `true`.
   */
  autoMaintenance?: boolean;
  /**
   * A git `*.lock` file left in the mirror by a killed git process blocks every later fetch.
   * When a fetch fails on one, lock files older than this are deleted and the fetch retried
   * once. Default 120 000 ms.
   */
  gitLockStaleMs?: number;
  /** Times a fetch that lost a ref lock to a concurrent push is retried. Default 4. */
  refLockRetries?: number;
  /**
   * A push to a remote on this host's file system copies up to this many objects itself and
   * moves the branch under its lock (local-push.ts), one git process at most instead of git's
   * six; a larger push, or 0 here, goes through `git push`. Default 1000.
   */
  localPushMaxObjects?: number;
}

/**
 * Every RepoMirror option default, in one place. `resolveRepoMirrorOptions` fills the options a
 * caller left out from here and refuses out-of-range values, once, at construction.
 */
export const REPO_MIRROR_DEFAULTS = Object.freeze({
  lockStaleMs: DEFAULT_LOCK_STALE_MS,
  lockTimeoutMs: DEFAULT_LOCK_TIMEOUT_MS,
  networkTimeoutMs: 600_000,
  gitTimeoutMs: DEFAULT_GIT_TIMEOUT_MS,
  gitLockStaleMs: 120_000,
  refLockRetries: 4,
  localPushMaxObjects: 1000,
  hostGitConfig: false,
  autoMaintenance: true,
});

type Tunables = keyof typeof REPO_MIRROR_DEFAULTS;

/** The tunable RepoMirror options with every default filled in and every value checked. */
export type ResolvedRepoMirrorOptions = Readonly<{
  [K in Tunables]: (typeof REPO_MIRROR_DEFAULTS)[K] extends boolean ? boolean : number;
}>;

/** Fills and checks the tunable options; throws GitInputError naming the option and the rule. */
export function resolveRepoMirrorOptions(options: Partial<RepoMirrorOptions>): ResolvedRepoMirrorOptions {
  const d = REPO_MIRROR_DEFAULTS;
  const refLockRetries = count(options.refLockRetries, d.refLockRetries, "refLockRetries");
  const localPushMaxObjects = count(
    options.localPushMaxObjects,
    d.localPushMaxObjects,
    "localPushMaxObjects",
  );
  return Object.freeze({
    lockStaleMs: positive(options.lockStaleMs, d.lockStaleMs, "lockStaleMs"),
    lockTimeoutMs: positive(options.lockTimeoutMs, d.lockTimeoutMs, "lockTimeoutMs"),
    networkTimeoutMs: positive(options.networkTimeoutMs, d.networkTimeoutMs, "networkTimeoutMs"),
    gitTimeoutMs: positive(options.gitTimeoutMs, d.gitTimeoutMs, "gitTimeoutMs"),
    gitLockStaleMs: positive(options.gitLockStaleMs, d.gitLockStaleMs, "gitLockStaleMs"),
    refLockRetries,
    localPushMaxObjects,
    hostGitConfig: options.hostGitConfig ?? d.hostGitConfig,
    autoMaintenance: options.autoMaintenance ?? d.autoMaintenance,
  });
}

function count(value: number | undefined, fallback: number, name: string): number {
  const resolved = value ?? fallback;
  if (!Number.isInteger(resolved) || resolved < 0) {
    throw new GitInputError(name, `must be an integer of 0 or more, received ${value}`);
  }
  return resolved;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!(typeof value === "number" && value > 0 && Number.isFinite(value))) {
    throw new GitInputError(name, `must be a number greater than 0, received ${JSON.stringify(value)}`);
  }
  return value;
}
