import { GitError } from "./git-error.ts";
import { localPush } from "./local-push.ts";
import { assertBranchName, assertSha } from "./ref-names.ts";
import type { RepoMirror } from "./repo-mirror.ts";

/**
 * Compare-and-swap publication of one branch on the project's remote (docs/architecture.md, Git: pushes use CAS,
 * a lost race is retried by the caller, never forced).
 *
 * `git push --force-with-lease=refs/heads/<b>:<expected> <sha>:refs/heads/<b>` asks the
 * remote to move `<b>` only if it is at `<expected>` (the empty expectation means "must not
 * exist"). The lease is always explicit, so nothing the mirror happens to know can turn this
 * into a blind force. The check and the update are atomic on the server (receive-pack updates
 * the ref under its lock with the old value we sent).
 *
 * Idempotence: when the branch already points at `sha`, the push is a success whatever was
 * expected — the desired state holds, which is what a redelivered job needs.
 *
 * A remote on this host's file system takes the same compare-and-swap without git's transport
 * where it is of the plain kind (local-push.ts), one git process at most instead of six.
 *
 * The mirror's `refs/heads/<b>` follows: on success git updates it as the remote-tracking ref of
 * `origin` (the fetch refspec maps `refs/heads/*` onto itself), with no extra process; on a
 * lost race it is re-fetched so the caller can rebase on `actualSha` at once.
 */

export interface PushBranchOptions {
  /** Short branch name on the remote, e.g. `overseer/task/S00-028`. */
  branch: string;
  /** Commit to publish; it must exist in the mirror (a worktree commit does). */
  sha: string;
  /** The commit the branch must currently point at, or `null` if it must not exist. */
  expectedOldSha: string | null;
  /**
   * Wraps the push itself (the remote's compare-and-swap and the read of a refusal), e.g. the
   * worker's run fence, which allows it only while Postgres says the run is live and holds
   * that answer until the push is over. It may throw instead of pushing. Default: push.
   */
  guard?: PushGuard | undefined;
}

/** Runs `push` (or refuses to, by throwing) around a ref move; see `PushBranchOptions.guard`. */
export type PushGuard = (push: () => Promise<PushBranchResult>) => Promise<PushBranchResult>;

export type PushBranchResult =
  | { ok: true }
  /** `actualSha` is the branch's value on the remote after the failed attempt; `null` = it does not exist. */
  | { ok: false; reason: "stale"; actualSha: string | null };

export async function pushBranch(mirror: RepoMirror, options: PushBranchOptions): Promise<PushBranchResult> {
  const push = () => casPush(mirror, options);
  return options.guard ? options.guard(push) : push();
}

async function casPush(mirror: RepoMirror, options: PushBranchOptions): Promise<PushBranchResult> {
  const branch = assertBranchName(options.branch, "branch");
  const sha = assertSha(options.sha, "sha");
  const expected =
    options.expectedOldSha === null ? null : assertSha(options.expectedOldSha, "expectedOldSha");
  const ref = `refs/heads/${branch}`;
  await mirror.verifyRemote();
  if (mirror.localPushMaxObjects > 0) {
    const maxObjects = mirror.localPushMaxObjects;
    const local = await localPush(mirror, { ref, sha, expectedOldSha: expected, maxObjects });
    if (local === "pushed") return { ok: true };
    if (local === "lost") {
      // As after a refused git push: the branch's value is fetched into the mirror (objects too),
      // so the caller can rebase on it at once.
      const actualSha = await refreshBranch(mirror, branch);
      return actualSha === sha ? { ok: true } : { ok: false, reason: "stale", actualSha };
    }
  }

  const result = await mirror.git(
    ["push", "--porcelain", `--force-with-lease=${ref}:${expected ?? ""}`, "origin", `${sha}:${ref}`],
    { network: "push", okExitCodes: [1] },
  );
  if (result.exitCode === 0) return { ok: true };

  const line = result.stdout.split("\n").find((l) => l.split("\t")[1]?.endsWith(`:${ref}`));
  const summary = line?.split("\t")[2] ?? "";
  const refused = (why: string) =>
    new GitError(
      {
        args: ["push", "origin", `${sha}:${ref}`],
        exitCode: 1,
        stderr: result.stderr,
        stdout: result.stdout,
        cwd: mirror.gitDir,
      },
      `the remote refused ${branch} (${why})`,
    );
  if (!line?.startsWith("!")) throw refused(summary || "no status line for the branch");
  // Whatever the wording ("stale info", "fetch first", "failed to update ref"…), the branch's
  // actual value decides: moved away from the expectation = a lost race; still at the
  // expectation = a refusal for another reason (hook, policy, permissions), not retryable.
  const actualSha = await refreshBranch(mirror, branch);
  if (actualSha === sha) return { ok: true };
  if (actualSha !== expected) return { ok: false, reason: "stale", actualSha };
  throw refused(summary);
}

/** Re-fetches one branch into the mirror (deleting it there if the remote has none); returns its value. */
export async function refreshBranch(mirror: RepoMirror, branch: string): Promise<string | null> {
  assertBranchName(branch, "branch");
  const ref = `refs/heads/${branch}`;
  const fetched = await mirror.git(["fetch", "--quiet", "--no-tags", "origin", `+${ref}:${ref}`], {
    network: "fetch",
    okExitCodes: [128],
    maintenance: false,
  });
  if (fetched.exitCode === 128) {
    if (!/couldn't find remote ref/i.test(fetched.stderr)) {
      throw new GitError({
        args: ["fetch", "origin", `+${ref}:${ref}`],
        exitCode: 128,
        stderr: fetched.stderr,
        stdout: fetched.stdout,
        cwd: mirror.gitDir,
      });
    }
    await mirror.git(["update-ref", "-d", ref]);
    return null;
  }
  // The value the fetch just wrote, from the ref file (no git process; git's read when the
  // layout is not plain).
  return (await mirror.branchHeads([branch])).get(branch) ?? null;
}
