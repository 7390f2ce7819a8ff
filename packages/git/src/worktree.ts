import { promises as fs, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { removeTree } from "@overseer/process";
import { type ChangedPath, describeChange, parseRawDiff } from "./changed-paths-parser.ts";
import { type CommitAuthor, identityEnv } from "./commit-identity.ts";
import { buildCommitMessage } from "./commit-message-builder.ts";
import { GitError, GitInputError } from "./git-error.ts";
import { retireAdmin } from "./linked-worktree.ts";
import { commitBody, plainObjectStore, readLooseCommit, writeLooseCommit } from "./loose-commit.ts";
import { assertSha } from "./ref-names.ts";
import { type GitResult, runGit } from "./run-git.ts";
import { WorktreeIndex } from "./worktree-index.ts";

/**
 * One job's checkout: a linked worktree of the project's mirror, detached at `baseSha`.
 *
 * Trust boundary. Between `addWorktree()` and `commit()` an untrusted agent owns every file
 * under `path`, including the `.git` *file* that points git at the worktree's admin directory.
 * It could replace that file with a `.git/` directory holding its own `config` (fsmonitor,
 * hooks, filters). So no command here lets git discover its repository: every call passes
 * `--git-dir=<worktreeGitDir>` and `--work-tree=<path>`, both recorded when the worktree was
 * created (before the agent ran). `worktreeGitDir` and `commonDir` live in the worker's data
 * dir; the sandbox binds them read-only (see `gitDirs()`).
 *
 * Symbolic links are stored as links (`core.symlinks=true`): git records the link text and
 * never opens the target, so a link to `/etc/passwd` commits the string "/etc/passwd".
 *
 * The worktree is always detached. Its `branch` is only the name the job intends to publish
 * to (via `pushBranch`); no local branch exists in the mirror, so the mirror's
 * `fetch --prune` (refspec `+refs/heads/*:refs/heads/*`) never conflicts with a checkout.
 */

export interface WorktreeInit {
  path: string;
  baseSha: string;
  branch: string | undefined;
  worktreeGitDir: string;
  commonDir: string;
  neverCommit: readonly string[];
  timeoutMs: number;
  /** The repository's objects are plain SHA-1 ones (MirrorLayout): the index may be read without git. */
  plainObjects: boolean;
}

export interface ChangedPathsOptions {
  /**
   * Also list new files matched by an ignore rule (`ignored: true`; ignored directories are
   * collapsed into one entry ending in `/`). Default `false`: ignored files are never committed,
   * pushed or landed — they die with the checkout — and setup hooks create them legitimately
   * (`node_modules/`), so the default list is exactly what `commit()` would record.
   */
  includeIgnored?: boolean;
  /**
   * `stage()` already ran and nothing has written to the checkout since (the agent's processes
   * are gone): the list is read from the index as it is, in one git process. Default false.
   */
  staged?: boolean;
  /**
   * Pair a deleted and an added path of similar content as a rename (`-M`). Default true.
   * Without it a rename is listed as its deletion and its addition (both paths, as a scope
   * check wants them), and a staged list is read from the index files without a git process
   * (worktree-index.ts) where they are of the plain kind.
   */
  renames?: boolean;
}

export interface CommitOptions {
  /** The agent's own message (subject, blank line, body). */
  message: string;
  /** Trailers appended as a block; `Task, Agent, Role, Action, Status` come first in that order. */
  trailers: Record<string, string>;
  /** Author and committer of the commit. */
  author: CommitAuthor;
  /**
   * Replace the HEAD commit instead of adding one (`--amend`: same parents, this tree and
   * message). Used on a prepared merge commit (merge-main.ts), so its markers never persist.
   * Default false.
   */
  amend?: boolean;
  /**
   * The index already holds what to commit: `changedPaths()` staged the checkout and nothing
   * has written to it since (the agent's processes are gone). The commit then records exactly
   * the paths that were listed and checked, in one git process instead of two. Default false:
   * everything is staged first.
   */
  staged?: boolean;
}

const NOTHING_TO_COMMIT = /nothing to commit|nothing added to commit|no changes added to commit/;

export class Worktree {
  /** Absolute path of the checkout. */
  readonly path: string;
  /** The commit the checkout started from; `changedPaths()` compares against it. */
  readonly baseSha: string;
  /** The branch this job means to publish to, if the caller named one (not checked out). */
  readonly branch: string | undefined;
  private readonly worktreeGitDir: string;
  private readonly commonDir: string;
  private readonly neverCommit: readonly string[];
  private readonly timeoutMs: number;
  private removed = false;
  /** The index the checkout was made with, and the staged one, read without git. */
  private readonly index: WorktreeIndex;

  constructor(init: WorktreeInit) {
    this.path = init.path;
    this.baseSha = init.baseSha;
    this.branch = init.branch;
    this.worktreeGitDir = init.worktreeGitDir;
    this.commonDir = init.commonDir;
    this.neverCommit = init.neverCommit;
    this.timeoutMs = init.timeoutMs;
    this.index = new WorktreeIndex(init.worktreeGitDir, init.plainObjects);
  }

  /** The git directories a sandbox should bind read-only so git inside the run can read history. */
  gitDirs(): { worktreeGitDir: string; commonDir: string } {
    return { worktreeGitDir: this.worktreeGitDir, commonDir: this.commonDir };
  }

  /**
   * What the checkout changed relative to `baseSha`: tracked edits and deletions, new files
   * that are not ignored, renames (git's 50% similarity), executable-bit changes, symlinks and
   * type changes. The list is exactly the content `commit()` records, because it is computed the
   * same way: stage everything (`add -A`) into this worktree's own index, then diff the index
   * against the base. Staging writes blobs into the mirror's object store, which the commit
   * reuses. Two git processes (three with `includeIgnored`; one less when `staged`; none for
   * a staged list without `renames` when the index files are of the plain kind).
   */
  async changedPaths(options: ChangedPathsOptions = {}): Promise<ChangedPath[]> {
    if (options.staged !== true) await this.stage();
    const raws = options.renames === false ? this.index.changes() : null;
    const changes: ChangedPath[] = [];
    for (const raw of raws ?? parseRawDiff((await this.diffIndex()).stdout)) {
      changes.push(await describeChange(raw, (p) => this.readLink(p)));
    }
    if (options.includeIgnored) changes.push(...(await this.ignoredNewPaths()));
    return changes;
  }

  /** `git diff-index` of the index against the base, renames paired (changedPaths). */
  private diffIndex(): Promise<GitResult> {
    return this.git([
      "diff-index",
      "--cached",
      "--raw",
      "-z",
      "-M",
      "--no-ext-diff",
      "--no-textconv",
      this.baseSha,
      "--",
    ]);
  }

  /**
   * Stages everything (`add -A`) and commits it on the detached HEAD with `message` plus the
   * trailer block, author = committer = `author`, no hooks, no signing. Returns the new commit
   * id, or `null` when nothing differs from the current HEAD.
   *
   * A new commit (not `amend`) costs no git process beside the staging (none when `staged`):
   * its tree is written from the index (index-tree.ts, `git write-tree` for an index of another
   * kind), the commit object without git (loose-commit.ts, byte for byte what `git commit`
   * writes) and HEAD moved as resetHead does. `git commit` itself, which
   * also refreshes and rewrites the index and writes the worktree's reflog (read by nobody: the
   * checkout is removed after its run), is only asked where loose-commit.ts leaves it to git
   * (SHA-256 or shared repositories, identities git would clean up) and for `amend`, whose
   * author and emptiness rules are git's own.
   */
  async commit(options: CommitOptions): Promise<string | null> {
    const text = buildCommitMessage(options.message, options.trailers);
    const env = identityEnv(options.author);
    if (options.staged !== true) await this.stage();
    if (options.amend !== true) {
      const made = await this.commitLoose(text, env);
      if (made !== undefined) return made;
    }
    this.index.invalidate();
    const result = await this.git(
      [
        "commit",
        "--quiet",
        "--no-verify",
        "--no-gpg-sign",
        "--cleanup=verbatim",
        ...(options.amend ? ["--amend"] : []),
        "--file=-",
      ],
      { input: text, env, okExitCodes: [1], maintenance: false },
    );
    if (result.exitCode === 1) {
      if (NOTHING_TO_COMMIT.test(result.stdout)) return null;
      throw new GitError(
        {
          args: ["commit"],
          exitCode: 1,
          stderr: result.stderr,
          stdout: result.stdout,
          cwd: this.path,
        },
        "commit failed",
      );
    }
    return this.head();
  }

  /**
   * The index committed on HEAD as `git commit` would: its tree (conflicts are left to
   * `write-tree`, which refuses them as commit does), nothing when that is HEAD's own tree
   * (git's "nothing to commit"), else the commit object written loose and HEAD moved to it.
   * HEAD's tree is the checkout's recorded one when HEAD is still the base, else read from its
   * loose object (a commit made here), else asked of git (packed). Undefined when git must make the commit
   * (writeLooseCommit's refusals), decided before any git process runs.
   */
  private async commitLoose(
    message: string,
    env: Record<string, string>,
  ): Promise<string | null | undefined> {
    const head = await this.head();
    const probe = { tree: head, parents: [head], message, env };
    if (commitBody(probe) === null || !plainObjectStore(this.commonDir)) return undefined;
    const tree = this.index.writeTree(this.commonDir) ?? (await this.gitWriteTree());
    const headTree =
      (head === this.baseSha ? this.index.baseTree() : null) ??
      readLooseCommit(this.commonDir, head)?.tree ??
      (await this.git(["rev-parse", "--verify", "--end-of-options", `${head}^{tree}`])).stdout.trim();
    if (tree === headTree) return null;
    const sha = writeLooseCommit(this.commonDir, { tree, parents: [head], message, env });
    if (sha === null) return undefined;
    await this.resetHead(sha);
    return sha;
  }

  /** `git write-tree`, which may write the index (its cache tree). */
  private async gitWriteTree(): Promise<string> {
    const tree = (await this.git(["write-tree"])).stdout.trim();
    this.index.invalidate();
    return tree;
  }

  /**
   * Points the detached HEAD back at `sha` (a commit of the checkout's history, e.g. its base):
   * a commit made here since is dropped from it, the index and the files stay as they are. What
   * `git update-ref --no-deref HEAD <sha>` does to a detached HEAD, without a git process: the
   * admin directory's HEAD file is replaced in one rename, through git's lock file `HEAD.lock`.
   * Lets a commit be made before its message is certain, and be replaced.
   */
  async resetHead(sha: string): Promise<void> {
    if (this.removed) {
      throw new GitInputError("worktree", `${this.path} was removed; create a new one with addWorktree()`);
    }
    const head = path.join(this.worktreeGitDir, "HEAD");
    // git's own lock file: fails (EEXIST) rather than race a git process moving HEAD.
    const lock = `${head}.lock`;
    writeFileSync(lock, `${assertSha(sha, "sha")}\n`, { flag: "wx" });
    renameSync(lock, head);
  }

  /**
   * The current HEAD commit of the checkout (the base, or the last commit made here). The admin
   * directory's small files are read and written synchronously (here and in resetHead): one call
   * each, ~10 µs of CPU against ~170 µs through the promise API's open, fstat, read and close.
   */
  async head(): Promise<string> {
    const text = readFileSync(path.join(this.worktreeGitDir, "HEAD"), "utf8");
    return assertSha(text.trim(), "worktree HEAD");
  }

  /**
   * Deletes the checkout and its admin directory in the mirror: what `git worktree remove
   * --force --force` does, without a git process. The admin directory goes first, in one rename
   * out of `worktrees/`, so git never lists a worktree whose files are half gone; emptied, it is
   * kept for the mirror's next worktree (linked-worktree.ts `retireAdmin`). Never follows symlinks; works whatever the agent
   * did to the checkout (a replaced `.git` file included). Idempotent.
   */
  async remove(): Promise<void> {
    if (this.removed) return;
    await retireAdmin(this.commonDir, this.worktreeGitDir);
    await removeTree(this.path);
    this.removed = true;
  }

  private pathspec(): string[] {
    if (this.neverCommit.length === 0) return [];
    return ["--", ":(top)", ...this.neverCommit.map((p) => `:(exclude,literal)${p}`)];
  }

  /**
   * Stages the whole checkout (`add --all`, the never-committed paths excepted) into this
   * worktree's own index: what `changedPaths({ staged: true })` lists and
   * `commit({ staged: true })` records. One git process.
   */
  async stage(): Promise<void> {
    this.index.invalidate();
    try {
      await this.git(["add", "--all", ...this.pathspec()]);
    } finally {
      this.index.invalidate();
    }
  }

  private async ignoredNewPaths(): Promise<ChangedPath[]> {
    const listing = await this.git([
      "ls-files",
      "-z",
      "--others",
      "--ignored",
      "--exclude-standard",
      "--directory",
      "--no-empty-directory",
      ...this.pathspec(),
    ]);
    const result: ChangedPath[] = [];
    for (const entry of listing.stdout.split("\0")) {
      if (entry === "") continue;
      const change: ChangedPath = { path: entry, status: "added", isSymlink: false, ignored: true };
      if (!entry.endsWith("/")) {
        const target = await this.readLink(entry);
        if (target !== undefined) {
          change.isSymlink = true;
          change.symlinkTarget = target;
        }
      }
      result.push(change);
    }
    return result;
  }

  /** The text of the link at `relative` (not followed), or undefined when it is not a link. */
  private async readLink(relative: string): Promise<string | undefined> {
    try {
      return await fs.readlink(path.join(this.path, relative));
    } catch {
      return undefined;
    }
  }

  private async git(
    args: readonly string[],
    options: {
      input?: string;
      env?: Record<string, string>;
      okExitCodes?: readonly number[];
      maintenance?: boolean;
    } = {},
  ): Promise<GitResult> {
    if (this.removed) {
      throw new GitInputError("worktree", `${this.path} was removed; create a new one with addWorktree()`);
    }
    const prefix = options.maintenance === false ? ["-c", "maintenance.auto=false", "-c", "gc.auto=0"] : [];
    return runGit([...prefix, "--git-dir", this.worktreeGitDir, "--work-tree", this.path, ...args], {
      cwd: this.path,
      timeoutMs: this.timeoutMs,
      ...(options.input !== undefined ? { input: options.input } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.okExitCodes ? { okExitCodes: options.okExitCodes } : {}),
    });
  }
}
