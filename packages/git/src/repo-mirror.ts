import { randomBytes } from "node:crypto";
import { appendFileSync, promises as fs } from "node:fs";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { withFileLock } from "./file-lock.ts";
import { GitError, GitInputError } from "./git-error.ts";
import { addLinkedWorktree, supportsLinkedWorktree } from "./linked-worktree.ts";
import { type MirrorLayout, readMirrorLayout } from "./mirror-layout.ts";
import { branchHeadsFromFiles } from "./ref-files.ts";
import { assertBranchName, assertRevision, isFullSha } from "./ref-names.ts";
import {
  hasOwnAlternates,
  parseRemoteLocation,
  type RemoteLocation,
  serverProgramArgs,
} from "./remote-location.ts";
import { type RepoMirrorOptions, resolveRepoMirrorOptions } from "./repo-mirror-options.ts";
import { type GitResult, runGit } from "./run-git.ts";
import { Worktree } from "./worktree.ts";

/**
 * A worker host's bare mirror of one project's repository, at `<dataDir>/mirrors/<projectId>.git`.
 *
 * Layout and states.
 * - absent → `ensure()` clones into `.<projectId>.git.tmp-<random>` and renames it into place,
 *   so a mirror path either does not exist or holds a complete clone; a clone interrupted by a
 *   crash leaves only a temp directory, deleted by the next `ensure()`.
 * - present → `ensure()` runs `fetch --prune origin` with the refspec
 *   `+refs/heads/*:refs/heads/*`: the mirror's branches are the remote's branches. Job
 *   checkouts are detached worktrees, so no fetch is ever refused because a branch is checked
 *   out, and no job state lives in mirror refs.
 *
 * Concurrency.
 * - Creating and fetching (`ensure()`) hold `<projectId>.lock` (file-lock.ts): one writer per
 *   mirror across every process on the host; a SIGKILLed holder is detected at once (dead pid)
 *   or after `lockStaleMs`.
 * - Inside one process, concurrent `ensure()` calls coalesce: a caller that arrives while a
 *   fetch runs waits for the *next* fetch (started after its call, so it sees every push that
 *   happened before it asked), and all callers that arrive during one fetch share that next one.
 * - `pruneWorktrees()`, and `addWorktree()` on unusual layouts (`git worktree add`), hold a
 *   separate short lock, `<projectId>.worktrees.lock`, so our prune never runs while git makes
 *   a worktree. The usual linked worktree is made in an order no prune can break
 *   (linked-worktree.ts), without that lock. Checkouts therefore never wait for a network fetch.
 * - Reads, commits in worktrees and pushes run without our locks; git's own ref and index
 *   locks cover them. A push also writes the mirror's copy of the branch (as its
 *   remote-tracking ref), so a concurrent fetch may lose that ref's lock: fetches are retried
 *   (`refLockRetries`), which converges because each rerun re-reads the remote.
 *
 * The remote. The mirror always talks to the `remote` it was constructed with: if the project's
 * repository setting changed since the clone, `ensure()` rewrites `remote.origin.url` (one extra
 * process, only then). Credentials are never configured; a remote that needs them relies on the
 * host (SSH agent, `GIT_SSH_COMMAND`, or with `hostGitConfig: true` the host's credential helper).
 */

export interface AddWorktreeOptions {
  /** Branch name or commit id to check out (detached). */
  base: string;
  /** Absolute (or cwd-relative) path for the checkout; must not exist or be an empty directory. */
  path: string;
  /** The branch the job will publish to. Recorded on the Worktree; nothing is checked out on it. */
  branch?: string;
  /**
   * Paths (relative to the checkout root, literal) that are never staged, listed or committed
   * — files the worker places into each checkout, such as a `.env` from the secret store.
   * Default none.
   */
  neverCommit?: readonly string[];
  /**
   * The mirror's layout as `readLayout()` gave it for this run's start (shared with
   * `branchHeads`, so the config is read once); read here when not given.
   */
  layout?: Promise<MirrorLayout>;
}

/** A branch's head commit and that commit's tree. */
export interface BranchTip {
  sha: string;
  tree: string;
}

const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const FETCH_REFSPEC = "+refs/heads/*:refs/heads/*";
const GIT_LOCK_CONFLICT = /\.lock': File exists|cannot lock ref|Unable to create '[^']*\.lock'/;

/** Per-process coalescing state of `ensure()`, shared by every RepoMirror on the same mirror dir. */
interface EnsureState {
  running: Promise<void> | null;
  queued: Promise<void> | null;
}
const ensureStates = new Map<string, EnsureState>();

export class RepoMirror {
  readonly dataDir: string;
  readonly projectId: string;
  readonly remote: string;
  readonly location: RemoteLocation;
  /** The bare mirror repository, `<dataDir>/mirrors/<projectId>.git`. */
  readonly gitDir: string;
  private readonly mirrorsDir: string;
  private readonly lockStaleMs: number;
  private readonly lockTimeoutMs: number;
  /** Bound on one clone, fetch or push, in ms. */
  readonly networkTimeoutMs: number;
  /** Bound on one local git command, in ms. */
  readonly gitTimeoutMs: number;
  private readonly hostGitConfig: boolean;
  /** Objects a push to a local remote copies itself at most (local-push.ts); 0: always `git push`. */
  readonly localPushMaxObjects: number;
  private readonly autoMaintenance: boolean;
  private readonly gitLockStaleMs: number;
  private readonly refLockRetries: number;
  private urlVerified = false;

  constructor(options: RepoMirrorOptions) {
    if (typeof options.dataDir !== "string" || options.dataDir === "") {
      throw new GitInputError(
        "dataDir",
        `expected a directory path, received ${JSON.stringify(options.dataDir)}`,
      );
    }
    if (
      typeof options.projectId !== "string" ||
      !PROJECT_ID.test(options.projectId) ||
      options.projectId.endsWith(".lock")
    ) {
      throw new GitInputError(
        "projectId",
        `expected a slug of letters, digits, ".", "_", "-" (max 128, not ending in ".lock"), received ${JSON.stringify(options.projectId)}`,
      );
    }
    this.location = parseRemoteLocation(options.remote);
    this.dataDir = path.resolve(options.dataDir);
    this.projectId = options.projectId;
    this.remote = options.remote;
    this.mirrorsDir = path.join(this.dataDir, "mirrors");
    this.gitDir = path.join(this.mirrorsDir, `${this.projectId}.git`);
    const resolved = resolveRepoMirrorOptions(options);
    this.lockStaleMs = resolved.lockStaleMs;
    this.lockTimeoutMs = resolved.lockTimeoutMs;
    this.networkTimeoutMs = resolved.networkTimeoutMs;
    this.gitTimeoutMs = resolved.gitTimeoutMs;
    this.gitLockStaleMs = resolved.gitLockStaleMs;
    this.refLockRetries = resolved.refLockRetries;
    this.hostGitConfig = resolved.hostGitConfig;
    this.localPushMaxObjects = resolved.localPushMaxObjects;
    this.autoMaintenance = resolved.autoMaintenance;
  }

  /**
   * Makes the mirror exist and reflect the remote as of some moment after this call: clones it
   * (two git processes, once per host) or fetches (one process, plus git's server and
   * maintenance children). Safe to call concurrently from any number of jobs and processes.
   */
  ensure(): Promise<void> {
    let state = ensureStates.get(this.gitDir);
    if (!state) {
      state = { running: null, queued: null };
      ensureStates.set(this.gitDir, state);
    }
    const current = state;
    if (current.queued) return current.queued;
    if (current.running) {
      const next = current.running
        .catch(() => undefined)
        .then(() => {
          current.queued = null;
          return this.startEnsure(current);
        });
      current.queued = next;
      return next;
    }
    return this.startEnsure(current);
  }

  private startEnsure(state: EnsureState): Promise<void> {
    const run = this.ensureLocked().finally(() => {
      if (state.running === run) state.running = null;
    });
    state.running = run;
    return run;
  }

  /** The commit id `ref` (branch name, commit id, or any commit-ish) names in the mirror, or `null`. */
  async resolveRef(ref: string): Promise<string | null> {
    assertRevision(ref, "ref");
    const result = await this.git(
      ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`],
      {
        okExitCodes: [1],
      },
    );
    const sha = result.stdout.trim();
    return result.exitCode === 0 && sha !== "" ? sha : null;
  }

  /**
   * What the mirror's config says of its layout (mirror-layout.ts), read once for a run's start
   * and handed to `branchHeads` and `addWorktree`. Rejects when there is no mirror.
   */
  readLayout(): Promise<MirrorLayout> {
    return readMirrorLayout(this.gitDir);
  }

  /**
   * The heads of `branches` in the mirror, read from its ref files (ref-files.ts), else in one
   * git process (`for-each-ref`); a branch the mirror does not have maps to `null`. `layout`:
   * as `readLayout()` gave it (read here when not given).
   */
  async branchHeads(
    branches: readonly string[],
    layout: Promise<MirrorLayout> = this.readLayout(),
  ): Promise<Map<string, string | null>> {
    const names = [...new Set(branches.map((b) => assertBranchName(b, "branch")))];
    const read = await branchHeadsFromFiles(this.gitDir, names, layout).catch((error: unknown) => {
      throw (error as NodeJS.ErrnoException).code === "ENOENT"
        ? new GitInputError("mirror", `${this.gitDir} does not exist yet; call ensure() first`)
        : error;
    });
    if (read !== null) return read;
    const tips = await this.branchTips(names);
    return new Map([...tips].map(([name, tip]) => [name, tip?.sha ?? null]));
  }

  /**
   * The head commits of `branches` in the mirror with their trees, in one git process
   * (`for-each-ref`); a branch the mirror does not have maps to `null`.
   */
  async branchTips(branches: readonly string[]): Promise<Map<string, BranchTip | null>> {
    const names = [...new Set(branches.map((b) => assertBranchName(b, "branch")))];
    const refs = names.map((b) => `refs/heads/${b}`);
    const result = await this.git(["for-each-ref", "--format=%(objectname) %(tree) %(refname)", ...refs]);
    const tips = new Map<string, BranchTip | null>(names.map((b) => [b, null]));
    for (const line of result.stdout.split("\n")) {
      const [sha, tree, ref] = line.split(" ", 3);
      if (sha === undefined || tree === undefined || ref === undefined) continue;
      // A pattern also matches the refs below it (refs/heads/main/x): only exact names count.
      const name = ref.slice("refs/heads/".length);
      if (tips.has(name)) tips.set(name, { sha, tree });
    }
    return tips;
  }

  /**
   * Checks `base` out, detached, into the fresh directory `path`. One git process when `base` is
   * a commit id (linked-worktree.ts), two for a branch name (its commit is read first).
   */
  async addWorktree(options: AddWorktreeOptions): Promise<Worktree> {
    const base = assertRevision(options.base, "base");
    if (options.branch !== undefined) assertBranchName(options.branch, "branch");
    if (typeof options.path !== "string" || options.path === "") {
      throw new GitInputError("path", `expected a directory path, received ${JSON.stringify(options.path)}`);
    }
    const neverCommit = (options.neverCommit ?? []).map((p, i) => relativeLiteral(p, `neverCommit[${i}]`));
    const target = path.resolve(options.path);
    // The mirror's presence and its layout, read at once (a config that cannot be read: git's way).
    const [, layout] = await Promise.all([
      this.assertExists(),
      (options.layout ?? this.readLayout()).catch(() => null),
    ]);
    const linked = layout !== null && supportsLinkedWorktree(layout);
    const sha = isFullSha(base) ? base : await this.resolveRef(base);
    if (sha === null) {
      throw new GitInputError("base", `"${base}" is not a branch or commit of the mirror; fetch it first`);
    }
    const worktreeGitDir = linked
      ? await addLinkedWorktree(this.gitDir, target, sha, this.gitTimeoutMs)
      : await withFileLock(this.worktreesLockPath(), this.lockOptions(), async () => {
          await this.git(["worktree", "add", "--quiet", "--detach", target, "--end-of-options", sha], {
            maintenance: false,
          });
          return this.readWorktreeGitDir(target);
        });
    return new Worktree({
      path: target,
      baseSha: sha,
      branch: options.branch,
      worktreeGitDir,
      commonDir: this.gitDir,
      neverCommit,
      timeoutMs: this.gitTimeoutMs,
      // Unknown (a config that could not be read): git answers.
      plainObjects: layout?.plainObjects ?? false,
    });
  }

  /** Forgets worktrees whose directories are gone (after a crash). One git process. */
  async pruneWorktrees(): Promise<void> {
    await this.assertExists();
    await withFileLock(this.worktreesLockPath(), this.lockOptions(), async () => {
      await this.git(["worktree", "prune"]);
    });
  }

  /**
   * Runs hardened git against the mirror (`--git-dir=<mirror>`). With `network: true` the call
   * gets the network timeout, the host config when `hostGitConfig` is set, and — for fetch,
   * ls-remote and push — the hardened server program of a local remote; a fetch that loses a ref
   * lock to a concurrent push is retried.
   */
  async git(
    args: readonly string[],
    options: {
      input?: string;
      env?: Record<string, string>;
      okExitCodes?: readonly number[];
      network?: "fetch" | "push";
      maintenance?: boolean;
    } = {},
  ): Promise<GitResult> {
    const prefix = options.maintenance === false ? ["-c", "maintenance.auto=false", "-c", "gc.auto=0"] : [];
    const [command, ...rest] = args;
    const server =
      options.network && command !== undefined
        ? serverProgramArgs(
            this.location,
            options.network,
            options.network !== "push" || (await hasOwnAlternates(this.location)),
          )
        : [];
    const fullArgs = command === undefined ? [] : [command, ...server, ...rest];
    const run = () =>
      runGit([...prefix, "--git-dir", this.gitDir, ...fullArgs], {
        cwd: this.gitDir,
        timeoutMs: options.network ? this.networkTimeoutMs : this.gitTimeoutMs,
        hostConfig: options.network !== undefined && this.hostGitConfig,
        ...(options.input !== undefined ? { input: options.input } : {}),
        ...(options.env ? { env: options.env } : {}),
        ...(options.okExitCodes ? { okExitCodes: options.okExitCodes } : {}),
      });
    return options.network === "fetch" && command === "fetch" ? this.fetchWithRetry(run) : run();
  }

  /**
   * Makes sure `remote.origin.url` is this mirror's `remote` before talking to it. Costs nothing
   * after the first call on this instance, or when `ensure()` already did it.
   */
  /** Whether commands that talk to the remote read the host's git config (`hostGitConfig`). */
  get usesHostGitConfig(): boolean {
    return this.hostGitConfig;
  }

  async verifyRemote(): Promise<void> {
    if (this.urlVerified) return;
    await this.assertExists();
    await this.syncRemoteUrl();
  }

  /**
   * When this mirror last reflected the remote, as any process on the host recorded it
   * (`markSynced`: each `ensure()`, and the caller's pushes that it marks): epoch ms, or null
   * when never recorded. One `stat`, no git process.
   */
  async syncedAt(): Promise<number | null> {
    const stat = await fs.stat(this.syncStampPath()).catch(() => null);
    return stat === null ? null : stat.mtimeMs;
  }

  /**
   * Records that the mirror reflected the remote at `at` (epoch ms): the mtime of
   * `<projectId>.synced` beside the mirror, which every process on the host reads
   * (`syncedAt`). A later call with an older time may win a race: the record only errs old.
   */
  async markSynced(at: number): Promise<void> {
    const stamp = this.syncStampPath();
    const seconds = at / 1000;
    await fs.utimes(stamp, seconds, seconds).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
      await fs.writeFile(stamp, "");
      await fs.utimes(stamp, seconds, seconds);
    });
  }

  private async ensureLocked(): Promise<void> {
    await fs.mkdir(this.mirrorsDir, { recursive: true });
    await withFileLock(path.join(this.mirrorsDir, `${this.projectId}.lock`), this.lockOptions(), async () => {
      // What the fetch or clone brings is the remote as of some moment after this one.
      const started = Date.now();
      if (await exists(path.join(this.gitDir, "HEAD"))) {
        await this.syncRemoteUrl();
        await this.fetch();
      } else {
        await this.createMirror();
      }
      this.urlVerified = true;
      await this.markSynced(started);
    });
  }

  private async createMirror(): Promise<void> {
    const prefix = `.${this.projectId}.git.tmp-`;
    for (const entry of await fs.readdir(this.mirrorsDir)) {
      if (entry.startsWith(prefix))
        await fs.rm(path.join(this.mirrorsDir, entry), { recursive: true, force: true });
    }
    // A mirror directory without HEAD is debris from outside this protocol; replace it.
    await fs.rm(this.gitDir, { recursive: true, force: true });
    const temp = path.join(this.mirrorsDir, `${prefix}${randomBytes(6).toString("hex")}`);
    try {
      await runGit(
        [
          "clone",
          "--bare",
          "--quiet",
          ...serverProgramArgs(this.location, "fetch"),
          "--",
          this.location.gitUrl,
          temp,
        ],
        { cwd: this.mirrorsDir, timeoutMs: this.networkTimeoutMs, hostConfig: this.hostGitConfig },
      );
      // The refspec later fetches use (a bare clone writes none), appended as the section git
      // reads with the clone's own `remote "origin"`: a `git config` process less per mirror.
      appendFileSync(path.join(temp, "config"), `[remote "origin"]\n\tfetch = ${FETCH_REFSPEC}\n`);
      await fs.rename(temp, this.gitDir);
    } catch (error) {
      await fs.rm(temp, { recursive: true, force: true });
      throw error;
    }
  }

  private async fetch(): Promise<void> {
    await this.git(["fetch", "--quiet", "--prune", "--no-tags", "origin"], {
      network: "fetch",
      maintenance: this.autoMaintenance,
    });
  }

  /**
   * Runs a fetch, retrying when it loses a ref lock. Pushes update the mirror's refs too (as
   * remote-tracking refs) without our lock, so a fetch can find a ref moved under it
   * ("cannot lock ref … is at X but expected Y"); rerunning it is correct and converges. If the
   * conflict persists, `*.lock` files older than gitLockStaleMs (left by a killed git) are
   * deleted once before the last try.
   */
  private async fetchWithRetry(run: () => Promise<GitResult>): Promise<GitResult> {
    let swept = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        if (!(error instanceof GitError) || !GIT_LOCK_CONFLICT.test(error.stderr)) throw error;
        if (attempt >= this.refLockRetries) {
          if (swept || (await this.removeStaleGitLocks()) === 0) throw error;
          swept = true;
        }
        await delay(Math.min(20 * 2 ** attempt, 500));
      }
    }
  }

  /** Deletes `*.lock` files under refs/ and at the top of the mirror older than gitLockStaleMs. */
  private async removeStaleGitLocks(): Promise<number> {
    let removed = 0;
    const cutoff = Date.now() - this.gitLockStaleMs;
    const visit = async (dir: string, recurse: boolean): Promise<void> => {
      let entries: import("node:fs").Dirent[];
      try {
        entries = await fs.readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (recurse) await visit(full, true);
        } else if (entry.isFile() && entry.name.endsWith(".lock")) {
          const stat = await fs.stat(full).catch(() => null);
          if (stat && stat.mtimeMs < cutoff) {
            await fs.rm(full, { force: true });
            removed++;
          }
        }
      }
    };
    await visit(this.gitDir, false);
    await visit(path.join(this.gitDir, "refs"), true);
    return removed;
  }

  /** Rewrites `remote.origin.url` if the mirror was cloned from another location. */
  private async syncRemoteUrl(): Promise<void> {
    const wanted = this.location.gitUrl;
    const config = await fs.readFile(path.join(this.gitDir, "config"), "utf8");
    const plain = /^[^\s"\\;#][^"\\;#\n]*[^\s"\\;#]$/.test(wanted);
    if (!plain || !config.includes(`\n\turl = ${wanted}\n`)) {
      await runGit(["--git-dir", this.gitDir, "config", "remote.origin.url", wanted], {
        cwd: this.gitDir,
        timeoutMs: this.gitTimeoutMs,
      });
    }
    this.urlVerified = true;
  }

  private async readWorktreeGitDir(worktreePath: string): Promise<string> {
    // Read right after creation, before any agent touches the checkout.
    const text = await fs.readFile(path.join(worktreePath, ".git"), "utf8");
    const match = /^gitdir: (.+)$/m.exec(text);
    const gitdir = match?.[1] ? path.resolve(worktreePath, match[1].trim()) : "";
    const expectedParent = `${path.join(this.gitDir, "worktrees")}${path.sep}`;
    if (!gitdir.startsWith(expectedParent)) {
      throw new Error(
        `new worktree ${worktreePath} points at ${JSON.stringify(gitdir)}, not inside ${expectedParent}`,
      );
    }
    return gitdir;
  }

  private async assertExists(): Promise<void> {
    if (!(await exists(path.join(this.gitDir, "HEAD")))) {
      throw new GitInputError("mirror", `${this.gitDir} does not exist yet; call ensure() first`);
    }
  }

  private syncStampPath(): string {
    return path.join(this.mirrorsDir, `${this.projectId}.synced`);
  }

  private worktreesLockPath(): string {
    return path.join(this.mirrorsDir, `${this.projectId}.worktrees.lock`);
  }

  private lockOptions(): { staleMs: number; timeoutMs: number } {
    return { staleMs: this.lockStaleMs, timeoutMs: this.lockTimeoutMs };
  }
}

function relativeLiteral(value: unknown, field: string): string {
  if (
    typeof value !== "string" ||
    value === "" ||
    path.isAbsolute(value) ||
    value.split(/[\\/]/).includes("..")
  ) {
    throw new GitInputError(
      field,
      `expected a relative path inside the checkout, received ${JSON.stringify(value)}`,
    );
  }
  return value;
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}
