import { GitError } from "./git-error.ts";
import { type PushBranchResult, type PushGuard, pushBranch, refreshBranch } from "./push-branch.ts";
import { assertBranchName, assertSha } from "./ref-names.ts";
import type { RepoMirror } from "./repo-mirror.ts";

/**
 * Publishes `sha` on `branch` only as a fast-forward: the branch is created when it does not
 * exist, moved when its head is an ancestor of `sha`, left alone when it already is `sha` (a
 * redelivered job), and refused otherwise — nothing is ever forced. A pull request branch
 * (`overseer/pr/<task>`) takes this path: it receives only approved heads, and each approved
 * head descends from the one before (the task branch moves forward only), so a branch that
 * would have to move sideways was changed by someone else and must not be overwritten.
 *
 * The branch's value is read from the remote first (one fetch of that branch); the push itself
 * is the compare-and-swap of `pushBranch` on that value, so a concurrent change between the read
 * and the push is a `stale` answer, retried here against the new value (at most `maxAttempts`).
 */
export interface FastForwardPushOptions {
  branch: string;
  sha: string;
  /** Wraps each push (the worker's run fence); see `PushBranchOptions.guard`. */
  guard?: PushGuard | undefined;
  /** Reads of the branch and pushes before giving up on a branch that keeps moving. Default 3. */
  maxAttempts?: number;
}

export type FastForwardPushResult =
  | { kind: "pushed"; previousSha: string | null }
  | { kind: "unchanged" }
  /** The branch holds commits `sha` does not contain: someone else moved it. Nothing was pushed. */
  | { kind: "diverged"; actualSha: string };

export async function fastForwardPush(
  mirror: RepoMirror,
  options: FastForwardPushOptions,
): Promise<FastForwardPushResult> {
  const branch = assertBranchName(options.branch, "branch");
  const sha = assertSha(options.sha, "sha");
  const attempts = options.maxAttempts ?? 3;
  let current = await refreshBranch(mirror, branch);
  for (let attempt = 1; ; attempt++) {
    if (current === sha) return { kind: "unchanged" };
    if (current !== null && !(await isAncestor(mirror, current, sha))) {
      return { kind: "diverged", actualSha: current };
    }
    const pushed: PushBranchResult = await pushBranch(mirror, {
      branch,
      sha,
      expectedOldSha: current,
      guard: options.guard,
    });
    if (pushed.ok) return { kind: "pushed", previousSha: current };
    if (attempt >= attempts) {
      throw new GitError(
        {
          args: ["push", "origin", `${sha}:refs/heads/${branch}`],
          exitCode: 1,
          stderr: "",
          stdout: "",
          cwd: mirror.gitDir,
        },
        `${branch} kept moving on the remote (${attempts} attempts); last seen at ${pushed.actualSha ?? "deleted"}`,
      );
    }
    current = pushed.actualSha;
  }
}

async function isAncestor(mirror: RepoMirror, ancestor: string, descendant: string): Promise<boolean> {
  const result = await mirror.git(["merge-base", "--is-ancestor", ancestor, descendant], {
    okExitCodes: [1],
  });
  return result.exitCode === 0;
}
