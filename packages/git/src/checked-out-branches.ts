import path from "node:path";
import { runGit } from "./run-git.ts";

/**
 * Which branches of a local repository are checked out in one of its working trees.
 *
 * docs/architecture.md, Git: Overseer never touches a user's working tree, so approved work must not be pushed
 * to a branch that a non-bare worktree of a local remote has checked out (the main worktree's
 * HEAD or any linked worktree's). One `git worktree list --porcelain -z` answers both "is it
 * bare?" (the main entry says `bare`) and "what is checked out where?", for one process
 * instead of `rev-parse --is-bare-repository` plus a worktree listing.
 *
 * The command runs in the user's repository with the usual hardening (no hooks, no fsmonitor,
 * `GIT_OPTIONAL_LOCKS=0` so nothing is written) and `GIT_CEILING_DIRECTORIES` set to the
 * parent, so a path that is not itself a repository cannot be mistaken for an enclosing one.
 */

export interface CheckedOutBranches {
  /** The main repository is bare. */
  bare: boolean;
  /** Short names of branches checked out in a non-bare working tree. */
  branches: Set<string>;
}

export async function checkedOutBranches(repoPath: string, timeoutMs: number): Promise<CheckedOutBranches> {
  const result = await runGit(["worktree", "list", "--porcelain", "-z"], {
    cwd: repoPath,
    timeoutMs,
    env: { GIT_CEILING_DIRECTORIES: path.dirname(path.resolve(repoPath)) },
  });
  const branches = new Set<string>();
  let bare = false;
  let first = true;
  let record: string[] = [];
  const flush = () => {
    if (record.length === 0) return;
    const isBare = record.includes("bare");
    if (first) bare = isBare;
    first = false;
    const branch = record.find((line) => line.startsWith("branch refs/heads/"));
    if (!isBare && branch) branches.add(branch.slice("branch refs/heads/".length));
    record = [];
  };
  for (const field of result.stdout.split("\0")) {
    if (field === "") flush();
    else record.push(field);
  }
  flush();
  return { bare, branches };
}
