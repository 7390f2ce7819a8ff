import type { RepoMirror } from "./repo-mirror.ts";
import { runGit } from "./run-git.ts";
import type { Worktree } from "./worktree.ts";

/** Helpers for git in a temporary worktree of the mirror (landing merges and rebases). */

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

export function conflictLines(output: string): string {
  return output
    .split("\n")
    .filter((line) => /^(CONFLICT|Auto-merging|Could not apply)/.test(line))
    .join("\n");
}
