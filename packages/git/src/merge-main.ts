import { type CommitAuthor, identityEnv } from "./commit-identity.ts";
import { buildCommitMessage } from "./commit-message-builder.ts";
import { GitInputError } from "./git-error.ts";
import { hasMergeTreeWriteTree } from "./git-version.ts";
import { LAND_DEFAULTS } from "./land-branch.ts";
import { commitTree } from "./landed-commit.ts";
import { assertSha } from "./ref-names.ts";
import type { RepoMirror } from "./repo-mirror.ts";
import { inScratchWorktree, unmergedFiles } from "./scratch-git.ts";

/**
 * Prepares the checkout of an executor that must integrate the main branch after a landing
 * conflict (docs/state-machine.md rule 3): a merge commit with parents `head` (the task
 * branch) and `main`, whose tree is git's merge result with the conflict markers of every
 * conflicted file written into it (diff3 style: ours, the merge base, theirs). The commit
 * exists only in the mirror; the worker checks it out, the agent removes the markers, and the
 * worker amends this commit with the agent's work, so the task branch never carries a commit
 * with markers — its history gains one merge commit that holds the resolution.
 *
 * Returns `up-to-date` when `main` is already in `head`.
 */
export interface MergeMainOptions {
  /** The task branch head. */
  head: string;
  /** The main branch head to merge in. */
  main: string;
  /** Message of the merge commit (the worker replaces it when it amends). */
  message: string;
  author: CommitAuthor;
  /** Scratch directory for the worktree merge on git < 2.38 (nothing is left in it). */
  workDir: string;
  /** `auto` (default): merge-tree when git ≥ 2.38, else a temporary worktree. */
  mergeMethod?: "auto" | "merge-tree" | "worktree";
}

export type MergeMainResult =
  | { kind: "up-to-date" }
  /** `sha`: the prepared merge commit; `conflicts`: files that hold conflict markers (may be empty). */
  | { kind: "merged"; sha: string; conflicts: string[] };

/** diff3 markers show the merge base between the two sides, which agents resolve best. */
const CONFLICT_STYLE = ["-c", "merge.conflictStyle=diff3"];

export async function mergeMainInto(mirror: RepoMirror, options: MergeMainOptions): Promise<MergeMainResult> {
  const head = assertSha(options.head, "head");
  const main = assertSha(options.main, "main");
  const env = identityEnv(options.author);
  const message = buildCommitMessage(options.message, {});
  const ancestor = await mirror.git(["merge-base", "--is-ancestor", main, head], { okExitCodes: [1] });
  if (ancestor.exitCode === 0) return { kind: "up-to-date" };
  const useMergeTree =
    options.mergeMethod === "merge-tree" ||
    ((options.mergeMethod ?? LAND_DEFAULTS.mergeMethod) === "auto" && (await hasMergeTreeWriteTree()));
  if (useMergeTree) {
    const result = await mirror.git(
      [...CONFLICT_STYLE, "merge-tree", "--write-tree", "-z", "--name-only", head, main],
      { okExitCodes: [1] },
    );
    const fields = result.stdout.split("\0");
    const tree = assertSha(fields[0] ?? "", "merge-tree result");
    const conflicts: string[] = [];
    if (result.exitCode === 1) {
      for (let i = 1; i < fields.length && fields[i] !== ""; i++) {
        const file = fields[i] as string;
        if (!conflicts.includes(file)) conflicts.push(file);
      }
    }
    return { kind: "merged", sha: await commitTree(mirror, tree, [head, main], message, env), conflicts };
  }
  if (typeof options.workDir !== "string" || options.workDir === "") {
    throw new GitInputError(
      "workDir",
      `expected a directory path, received ${JSON.stringify(options.workDir)}`,
    );
  }
  const scratch = { workDir: options.workDir, prefix: "merge-main-", base: head, env, message };
  return inScratchWorktree(mirror, scratch, async ({ git, worktree, messageFile }) => {
    const merged = await git(
      [...CONFLICT_STYLE, "merge", "--no-ff", "--no-commit", "--no-verify", "--no-log", main],
      [1],
    );
    const conflicts = merged.exitCode === 0 ? [] : await unmergedFiles(git);
    await git(["add", "--all"]);
    await git(["commit", "--quiet", "--no-verify", "--no-gpg-sign", "--cleanup=verbatim", "-F", messageFile]);
    return { kind: "merged", sha: await worktree.head(), conflicts };
  });
}
