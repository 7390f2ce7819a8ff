import type { RepoKind } from "@overseer/domain";
import { checkedOutBranches } from "./checked-out-branches.ts";
import { assertBranchName } from "./ref-names.ts";
import { parseRemoteLocation } from "./remote-location.ts";
import { DEFAULT_GIT_TIMEOUT_MS, runGit } from "./run-git.ts";

/**
 * What a project's repository is, read once when the project is registered (`overseer init`,
 * POST /api/v1/projects); domain `landingBranch` turns it into the branch work lands on.
 * A URL is `remote`; a local repository is `working_copy` when it has a working tree (the
 * user's own clone) or has `branch` checked out in a linked worktree, else `bare`. One
 * `git worktree list` (checkedOutBranches), which writes nothing. A local path that is not a
 * repository is an error, for the caller to report or to treat as `remote`.
 */
export async function repoKindOf(
  repo: string,
  branch: string,
  timeoutMs = DEFAULT_GIT_TIMEOUT_MS,
): Promise<RepoKind> {
  const location = parseRemoteLocation(repo, "repo");
  if (location.kind === "url") return "remote";
  const { bare, branches } = await checkedOutBranches(location.path, timeoutMs);
  return bare && !branches.has(assertBranchName(branch, "branch")) ? "bare" : "working_copy";
}

/**
 * Creates the integration branch `landing` at `branch` in a working copy when it does not
 * exist yet, so the user can `git merge` it and reviewers can diff against it from the first
 * run. Only a ref is written (compare-and-swap on "absent"): never the working tree, the index
 * or HEAD. Returns whether it was created (false: it existed, or `branch` has no commit yet).
 */
export async function createIntegrationBranch(
  repoPath: string,
  branch: string,
  landing: string,
  timeoutMs = DEFAULT_GIT_TIMEOUT_MS,
): Promise<boolean> {
  const from = `refs/heads/${assertBranchName(branch, "branch")}`;
  const to = `refs/heads/${assertBranchName(landing, "landing")}`;
  const heads = await runGit(["for-each-ref", "--format=%(refname) %(objectname)", from, to], {
    cwd: repoPath,
    timeoutMs,
  });
  const lines = heads.stdout.split("\n").filter((line) => line !== "");
  const source = lines.find((line) => line.startsWith(`${from} `))?.slice(from.length + 1);
  if (source === undefined || lines.some((line) => line.startsWith(`${to} `))) return false;
  const created = await runGit(["update-ref", "-m", "overseer init: integration branch", to, source, ""], {
    cwd: repoPath,
    timeoutMs,
    okExitCodes: [128],
  });
  return created.exitCode === 0;
}
