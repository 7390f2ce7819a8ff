import { promises as fs } from "node:fs";
import path from "node:path";
import { checkedOutBranches } from "./checked-out-branches.ts";
import { type CommitAuthor, identityEnv } from "./commit-identity.ts";
import { buildCommitMessage } from "./commit-message-builder.ts";
import { GitError, GitInputError, LandRaceError } from "./git-error.ts";
import { hasMergeTreeWriteTree } from "./git-version.ts";
import { pushBranch } from "./push-branch.ts";
import { assertBranchName, assertSha, integrationBranchName } from "./ref-names.ts";
import type { RepoMirror } from "./repo-mirror.ts";
import { runGit } from "./run-git.ts";

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
 *    otherwise a merge commit (`--no-ff` shape: parents landing, source) made with
 *    `git merge-tree --write-tree` + `commit-tree` — no checkout at all — or, on git < 2.38 or
 *    with `mergeMethod: "worktree"`, in a temporary worktree under `workDir`;
 * 3. push with compare-and-swap on the landing branch's old value (pushBranch). A lost race
 *    re-fetches and starts over, at most `maxAttempts` times; nothing is ever forced.
 * A conflict is an answer, not an error: the conflicted files and git's messages are
 * returned and the landing branch is left as it was.
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
  /**
   * Called (and awaited) before each compare-and-swap push, e.g. to log retries. Default none.
   */
  onAttempt?: (attempt: LandAttempt) => void | Promise<void>;
}

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
    }
  | { kind: "conflict"; files: string[]; details: string };

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
    let fastForward = true;
    if (mergeBase === sourceHead) {
      if (current !== null)
        return { kind: "landed", sha: current, branch: landing, integration, fastForward: true };
      next = base; // the integration branch does not exist yet: create it at target
    } else if (mergeBase === base) {
      next = sourceHead;
    } else if (mergeBase === null) {
      return {
        kind: "conflict",
        files: [],
        details: `"${source}" and "${landing}" have no common history; refusing to merge unrelated histories`,
      };
    } else {
      const merged = useMergeTree
        ? await mergeWithMergeTree(mirror, base, sourceHead, message, env)
        : await mergeInWorktree(mirror, options.workDir, base, sourceHead, message, env);
      if (merged.kind === "conflict") return merged;
      next = merged.sha;
      fastForward = false;
    }

    await options.onAttempt?.({ attempt, branch: landing, expectedOldSha: current, sha: next, fastForward });
    const pushed = await pushBranch(mirror, { branch: landing, sha: next, expectedOldSha: current });
    if (pushed.ok) return { kind: "landed", sha: next, branch: landing, integration, fastForward };
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
  await fs.mkdir(workDir, { recursive: true });
  const scratch = await fs.mkdtemp(path.join(path.resolve(workDir), "land-"));
  try {
    const messageFile = path.join(scratch, "MERGE_MSG");
    await fs.writeFile(messageFile, message);
    const worktree = await mirror.addWorktree({ base, path: path.join(scratch, "checkout") });
    try {
      const { worktreeGitDir } = worktree.gitDirs();
      const git = (args: string[], okExitCodes: number[] = []) =>
        runGit(
          [
            "-c",
            "maintenance.auto=false",
            "--git-dir",
            worktreeGitDir,
            "--work-tree",
            worktree.path,
            ...args,
          ],
          { cwd: worktree.path, env, okExitCodes, timeoutMs: mirror.gitTimeoutMs },
        );
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
      const conflicted = await git([
        "diff",
        "--name-only",
        "-z",
        "--diff-filter=U",
        "--no-ext-diff",
        "--no-textconv",
      ]);
      const files = [...new Set(conflicted.stdout.split("\0").filter((f) => f !== ""))];
      if (files.length === 0) {
        throw new GitError(
          {
            args: ["merge", source],
            exitCode: 1,
            stderr: merged.stderr,
            stdout: merged.stdout,
            cwd: worktree.path,
          },
          "merge failed without conflicts",
        );
      }
      const details = `${merged.stdout}${merged.stderr}`
        .split("\n")
        .filter((line) => /^(CONFLICT|Auto-merging)/.test(line))
        .join("\n");
      return { kind: "conflict", files, details };
    } finally {
      await worktree.remove();
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}
