import { promises as fs } from "node:fs";
import path from "node:path";
import { GitError } from "./git-error.ts";
import type { RepoMirror } from "./repo-mirror.ts";
import { runGit } from "./run-git.ts";
import type { Worktree } from "./worktree.ts";

/** Helpers for git in a temporary worktree of the mirror (landing and merge-main merges). */

export type ScratchGit = (args: string[], okExitCodes?: number[]) => ReturnType<typeof runGit>;

/** Hardened git inside a temporary worktree of the mirror (no maintenance, explicit dirs). */
export function scratchGit(mirror: RepoMirror, worktree: Worktree, env: Record<string, string>): ScratchGit {
  const { worktreeGitDir } = worktree.gitDirs();
  return (args, okExitCodes = []) =>
    runGit(
      [
        "-c",
        "maintenance.auto=false",
        "-c",
        "gc.auto=0",
        "--git-dir",
        worktreeGitDir,
        "--work-tree",
        worktree.path,
        ...args,
      ],
      { cwd: worktree.path, env, okExitCodes, timeoutMs: mirror.gitTimeoutMs },
    );
}

/** What `inScratchWorktree` hands its work. */
export interface ScratchWorktree {
  readonly git: ScratchGit;
  readonly worktree: Worktree;
  /** `MERGE_MSG` in the scratch directory, outside the checkout (written when a message is given). */
  readonly messageFile: string;
}

/**
 * Runs `work` in a temporary detached worktree of the mirror at `base`, inside a fresh scratch
 * directory `<workDir>/<prefix>XXXXXX`; the worktree and the directory are removed afterwards,
 * whatever happens.
 */
export async function inScratchWorktree<T>(
  mirror: RepoMirror,
  options: { workDir: string; prefix: string; base: string; env: Record<string, string>; message?: string },
  work: (scratch: ScratchWorktree) => Promise<T>,
): Promise<T> {
  await fs.mkdir(options.workDir, { recursive: true });
  const scratch = await fs.mkdtemp(path.join(path.resolve(options.workDir), options.prefix));
  try {
    const messageFile = path.join(scratch, "MERGE_MSG");
    if (options.message !== undefined) await fs.writeFile(messageFile, options.message);
    const worktree = await mirror.addWorktree({ base: options.base, path: path.join(scratch, "checkout") });
    try {
      return await work({ git: scratchGit(mirror, worktree, options.env), worktree, messageFile });
    } finally {
      await worktree.remove();
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

export async function unmergedFiles(git: ScratchGit): Promise<string[]> {
  const conflicted = await git([
    "diff",
    "--name-only",
    "-z",
    "--diff-filter=U",
    "--no-ext-diff",
    "--no-textconv",
  ]);
  return [...new Set(conflicted.stdout.split("\0").filter((f) => f !== ""))];
}

/** A merge or rebase that stopped (exit code 1) with no unmerged file: a failure, not a conflict. */
export function failedWithoutConflicts(
  args: readonly [string, ...string[]],
  output: { stdout: string; stderr: string },
  worktree: Worktree,
): GitError {
  return new GitError(
    { args: [...args], exitCode: 1, stderr: output.stderr, stdout: output.stdout, cwd: worktree.path },
    `${args[0]} failed without conflicts`,
  );
}

export function conflictLines(output: string): string {
  return output
    .split("\n")
    .filter((line) => /^(CONFLICT|Auto-merging|Could not apply)/.test(line))
    .join("\n");
}
