import { checkedOutBranches } from "./checked-out-branches.ts";
import { type CommitAuthor, identityEnv } from "./commit-identity.ts";
import { buildCommitMessage } from "./commit-message-builder.ts";
import { GitInputError, LandRaceError } from "./git-error.ts";
import { hasMergeTreeWriteTree } from "./git-version.ts";
import { pushBranch } from "./push-branch.ts";
import { assertBranchName, assertSha, integrationBranchName } from "./ref-names.ts";
import type { RepoMirror } from "./repo-mirror.ts";
import { conflictLines, failedWithoutConflicts, inScratchWorktree, unmergedFiles } from "./scratch-git.ts";

/**
 * Lands an approved task branch on the project's main branch (docs/state-machine.md rule 3; docs/architecture.md, Git).
 *
 * Where. Normally on `target`. When the remote is a local non-bare repository with `target`
 * checked out in one of its working trees, on `overseer/<target>` instead (`integration: true`):
 * Overseer never writes to a user's working tree, and pushing to a checked-out branch would
 * either be refused or (with `receive.denyCurrentBranch=updateInstead`) rewrite it. The
 * integration branch starts at `target` the first time and afterwards builds on itself.
 *
 * How, per attempt, against a freshly fetched mirror:
 * 1. read source, target and landing branch (one `for-each-ref`), and their merge base;
 * 2. landing branch already contains source → done, nothing pushed (a redelivered approve job
 *    lands once); landing branch is an ancestor of source → fast-forward to source;
 *    otherwise, by `strategy`:
 *    - `merge` (default): a merge commit (`--no-ff` shape: parents landing, source) made with
 *      `git merge-tree --write-tree` + `commit-tree` — no checkout at all — or, on git < 2.38 or
 *      with `mergeMethod: "worktree"`, in a temporary worktree under `workDir`;
 *    - `rebase`: the source's commits replayed onto the landing branch in a temporary worktree
 *      (`git rebase`), a linear history. A source that already holds merge commits (main merged
 *      in to resolve an earlier conflict) is merged instead: replaying it would drop the
 *      resolution and bring the conflict back;
 * 3. a non-fast-forward result is handed to `check` (the project's check command on the
 *    integrated tree) before anything is pushed; a failing check lands nothing;
 * 4. push with compare-and-swap on the landing branch's old value (pushBranch). A lost race
 *    re-fetches and starts over, at most `maxAttempts` times; nothing is ever forced.
 * A conflict (a merge's, or any commit's of a rebase) is an answer, not an error: the
 * conflicted files and git's messages are returned and the landing branch is left as it was.
 *
 * Merges read `.gitattributes` from the trees being merged, so a `merge=<driver>` attribute the
 * agent wrote can name a driver — but the program behind a driver comes from configuration
 * only, and no configuration defines one (see run-git.ts).
 */

export interface LandBranchOptions {
  /** The task branch to land. */
  source: string;
  /** The branch to land on (the project's main branch). */
  target: string;
  /**
   * Land exactly this commit (the one the reviewer approved) instead of whatever `source` points
   * at now. It must be in the mirror after a fetch. Default: the source branch's head.
   */
  sourceSha?: string;
  /** Scratch directory for worktree merges (created if missing; nothing is left in it). */
  workDir: string;
  /** Message of the merge commit when one is needed. */
  message: string;
  /** Author and committer of the merge commit. */
  author: CommitAuthor;
  /** Attempts before giving up on a branch that keeps moving. Default 5. */
  maxAttempts?: number;
  /** `auto` (default): merge-tree when git ≥ 2.38, else a temporary worktree. */
  mergeMethod?: "auto" | "merge-tree" | "worktree";
  /** How a branch that cannot fast-forward is integrated. Default `merge`. */
  strategy?: LandStrategy;
  /**
   * Verifies a non-fast-forward integration (a commit in the mirror that is not pushed yet)
   * before it is pushed, e.g. by running the project's check command on its tree. Not called
   * for a fast-forward: that tree is exactly the reviewed one. Default none.
   */
  check?: (sha: string) => Promise<LandCheckOutcome>;
  /**
   * Called (and awaited) before each compare-and-swap push, e.g. to log retries. Default none.
   */
  onAttempt?: (attempt: LandAttempt) => void | Promise<void>;
}

export const LAND_STRATEGIES = ["merge", "rebase"] as const;
export type LandStrategy = (typeof LAND_STRATEGIES)[number];

export type LandCheckOutcome = { ok: true } | { ok: false; output: string };

export interface LandAttempt {
  /** 1-based attempt number. */
  attempt: number;
  /** The branch about to be pushed. */
  branch: string;
  /** Its value the push expects (`null`: must not exist yet). */
  expectedOldSha: string | null;
  /** The value about to be pushed. */
  sha: string;
  fastForward: boolean;
}

export type LandBranchResult =
  | {
      kind: "landed";
      /** The landing branch's value now. */
      sha: string;
      /** The branch that received the work: `target`, or `overseer/<target>` when `integration`. */
      branch: string;
      integration: boolean;
      /** No merge commit was needed (fast-forward, or the work was already there). */
      fastForward: boolean;
      /** How the work was integrated: `fast-forward`, `merge` or `rebase`. */
      method: "fast-forward" | LandStrategy;
    }
  | { kind: "conflict"; files: string[]; details: string; method: LandStrategy }
  /** The integrated commit `sha` failed `check`; nothing was pushed. */
  | { kind: "check_failed"; sha: string; output: string; method: LandStrategy };

export const DEFAULT_LAND_ATTEMPTS = 5;

type MergeOutcome = { kind: "merged"; sha: string } | { kind: "conflict"; files: string[]; details: string };

export async function landBranch(mirror: RepoMirror, options: LandBranchOptions): Promise<LandBranchResult> {
  const source = assertBranchName(options.source, "source");
  const target = assertBranchName(options.target, "target");
  const sourceSha = options.sourceSha === undefined ? undefined : assertSha(options.sourceSha, "sourceSha");
  const env = identityEnv(options.author);
  const message = buildCommitMessage(options.message, {});
  const maxAttempts = options.maxAttempts ?? DEFAULT_LAND_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new GitInputError(
      "maxAttempts",
      `must be an integer of at least 1, received ${JSON.stringify(maxAttempts)}`,
    );
  }
  if (typeof options.workDir !== "string" || options.workDir === "") {
    throw new GitInputError(
      "workDir",
      `expected a directory path, received ${JSON.stringify(options.workDir)}`,
    );
  }
  const useMergeTree =
    options.mergeMethod === "merge-tree" ||
    ((options.mergeMethod ?? "auto") === "auto" && (await hasMergeTreeWriteTree()));

  const strategy = options.strategy ?? "merge";
  if (!LAND_STRATEGIES.includes(strategy)) {
    throw new GitInputError(
      "strategy",
      `expected one of ${LAND_STRATEGIES.join(", ")}, received ${JSON.stringify(strategy)}`,
    );
  }
  const integration =
    mirror.location.kind === "local" &&
    (await checkedOutBranches(mirror.location.path, mirror.gitTimeoutMs)).branches.has(target);
  const landing = integration ? integrationBranchName(target) : target;

  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    await mirror.ensure();
    const heads = await readHeads(mirror, [source, target, landing]);
    if (sourceSha !== undefined && attempt === 1 && (await mirror.resolveRef(sourceSha)) === null) {
      throw new GitInputError(
        "sourceSha",
        `commit ${sourceSha} is not on the remote; push the task branch first`,
      );
    }
    const sourceHead = sourceSha ?? heads.get(source);
    if (!sourceHead) {
      throw new GitInputError(
        "source",
        `branch "${source}" does not exist on the remote; push it before landing`,
      );
    }
    const current = heads.get(landing) ?? null;
    const base = current ?? heads.get(target);
    if (!base) throw new GitInputError("target", `branch "${target}" does not exist on the remote`);

    const mergeBase = await readMergeBase(mirror, base, sourceHead);
    let next: string;
    let method: "fast-forward" | LandStrategy = "fast-forward";
    if (mergeBase === sourceHead) {
      if (current !== null)
        return { kind: "landed", sha: current, branch: landing, integration, fastForward: true, method };
      next = base; // the integration branch does not exist yet: create it at target
    } else if (mergeBase === base) {
      next = sourceHead;
    } else if (mergeBase === null) {
      return {
        kind: "conflict",
        files: [],
        details: `"${source}" and "${landing}" have no common history; refusing to merge unrelated histories`,
        method: strategy,
      };
    } else {
      const rebase = strategy === "rebase" && !(await hasMergeCommits(mirror, base, sourceHead));
      method = rebase ? "rebase" : "merge";
      const integrated = rebase
        ? await rebaseInWorktree(mirror, options.workDir, base, sourceHead, env)
        : useMergeTree
          ? await mergeWithMergeTree(mirror, base, sourceHead, message, env)
          : await mergeInWorktree(mirror, options.workDir, base, sourceHead, message, env);
      if (integrated.kind === "conflict") return { ...integrated, method };
      next = integrated.sha;
      if (next === current) {
        // Every commit of the source was already on the landing branch (a rebase dropped them).
        return { kind: "landed", sha: current, branch: landing, integration, fastForward: true, method };
      }
      if (options.check) {
        const checked = await options.check(next);
        if (!checked.ok) return { kind: "check_failed", sha: next, output: checked.output, method };
      }
    }

    const fastForward = method === "fast-forward";
    await options.onAttempt?.({ attempt, branch: landing, expectedOldSha: current, sha: next, fastForward });
    const pushed = await pushBranch(mirror, { branch: landing, sha: next, expectedOldSha: current });
    if (pushed.ok) return { kind: "landed", sha: next, branch: landing, integration, fastForward, method };
  }
  throw new LandRaceError(landing, maxAttempts);
}

/** The heads of `branches` in the mirror (one process). Missing branches are absent from the map. */
async function readHeads(mirror: RepoMirror, branches: readonly string[]): Promise<Map<string, string>> {
  const refs = [...new Set(branches)].map((b) => `refs/heads/${b}`);
  const result = await mirror.git(["for-each-ref", "--format=%(objectname) %(refname)", ...refs]);
  const heads = new Map<string, string>();
  for (const line of result.stdout.split("\n")) {
    const space = line.indexOf(" ");
    if (space < 0) continue;
    const name = line.slice(space + 1);
    if (refs.includes(name)) heads.set(name.slice("refs/heads/".length), line.slice(0, space));
  }
  return heads;
}

async function readMergeBase(mirror: RepoMirror, a: string, b: string): Promise<string | null> {
  const result = await mirror.git(["merge-base", a, b], { okExitCodes: [1] });
  const sha = result.stdout.trim();
  return result.exitCode === 0 && sha !== "" ? sha : null;
}

/** Whether `base..head` holds a merge commit (one process). */
async function hasMergeCommits(mirror: RepoMirror, base: string, head: string): Promise<boolean> {
  const result = await mirror.git(["rev-list", "--merges", "--max-count=1", `${base}..${head}`]);
  return result.stdout.trim() !== "";
}

/**
 * Replays `base..source` onto `base` in a temporary worktree (`git rebase`, committer =
 * `env`'s identity, authors kept). A conflict in any commit aborts the rebase and reports the
 * files of that commit.
 */
async function rebaseInWorktree(
  mirror: RepoMirror,
  workDir: string,
  base: string,
  source: string,
  env: Record<string, string>,
): Promise<MergeOutcome> {
  return inScratchWorktree(
    mirror,
    { workDir, prefix: "rebase-", base: source, env },
    async ({ git, worktree }) => {
      const rebased = await git(["rebase", "--no-autosquash", base], [1]);
      if (rebased.exitCode === 0) return { kind: "merged", sha: await worktree.head() };
      const files = await unmergedFiles(git);
      await git(["rebase", "--abort"], [1, 128]);
      if (files.length === 0) throw failedWithoutConflicts(["rebase", base], rebased, worktree);
      return { kind: "conflict", files, details: conflictLines(`${rebased.stdout}${rebased.stderr}`) };
    },
  );
}

async function mergeWithMergeTree(
  mirror: RepoMirror,
  base: string,
  source: string,
  message: string,
  env: Record<string, string>,
): Promise<MergeOutcome> {
  const result = await mirror.git(
    ["merge-tree", "--write-tree", "--messages", "-z", "--name-only", base, source],
    {
      okExitCodes: [1],
    },
  );
  const fields = result.stdout.split("\0");
  const tree = fields[0] ?? "";
  if (result.exitCode === 1) {
    const files: string[] = [];
    let i = 1;
    for (; i < fields.length && fields[i] !== ""; i++) {
      const file = fields[i] as string;
      if (!files.includes(file)) files.push(file);
    }
    // Then messages: <path count>\0<paths…>\0<conflict type>\0<message>\0, repeated.
    const messages: string[] = [];
    i++;
    while (i < fields.length) {
      const count = Number(fields[i]);
      if (!Number.isInteger(count) || count < 0) break;
      i += 1 + count;
      const text = fields[i + 1];
      if (text !== undefined) messages.push(text.trimEnd());
      i += 2;
    }
    return { kind: "conflict", files, details: messages.join("\n") };
  }
  const commit = await mirror.git(
    ["commit-tree", assertSha(tree, "merge-tree result"), "-p", base, "-p", source, "-F", "-"],
    { input: message, env },
  );
  return { kind: "merged", sha: assertSha(commit.stdout.trim(), "commit-tree result") };
}

async function mergeInWorktree(
  mirror: RepoMirror,
  workDir: string,
  base: string,
  source: string,
  message: string,
  env: Record<string, string>,
): Promise<MergeOutcome> {
  const scratch = { workDir, prefix: "land-", base, env, message };
  return inScratchWorktree(mirror, scratch, async ({ git, worktree, messageFile }) => {
    const merged = await git(
      [
        "merge",
        "--no-ff",
        "--no-verify",
        "--no-edit",
        "--no-log",
        "--cleanup=verbatim",
        "-F",
        messageFile,
        source,
      ],
      [1],
    );
    if (merged.exitCode === 0) return { kind: "merged", sha: await worktree.head() };
    const files = await unmergedFiles(git);
    if (files.length === 0) throw failedWithoutConflicts(["merge", source], merged, worktree);
    const details = conflictLines(`${merged.stdout}${merged.stderr}`);
    return { kind: "conflict", files, details };
  });
}
