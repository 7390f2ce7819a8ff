import { checkedOutBranches, plainBareWithoutCheckouts } from "./checked-out-branches.ts";
import { type CommitAuthor, identityEnv } from "./commit-identity.ts";
import { buildCommitMessage } from "./commit-message-builder.ts";
import { GitInputError, LandRaceError } from "./git-error.ts";
import { hasMergeTreeWriteTree } from "./git-version.ts";
import {
  alreadyLanded,
  commitReviewedWork,
  commitTree,
  type ReviewedHead,
  readBranchCommits,
  readReviewedHead,
} from "./landed-commit.ts";
import { type PushGuard, pushBranch } from "./push-branch.ts";
import { assertBranchName, assertSha } from "./ref-names.ts";
import type { BranchTip, RepoMirror } from "./repo-mirror.ts";
import { conflictLines, failedWithoutConflicts, inScratchWorktree, unmergedFiles } from "./scratch-git.ts";

/**
 * Lands an approved task branch on the project's main branch (docs/state-machine.md rule 3; docs/architecture.md, Git).
 *
 * What. Only the reviewed head's tree, never the task branch's history: the task branch holds
 * every attempt, rejected ones included, and none of them may become an ancestor of the main
 * branch (a later rebase or merge of main would replay them). The work arrives as one new
 * commit (landed-commit.ts) with the reviewed head's tree, the head's message and trailers
 * (`extraTrailers` over them) and `Reviewed-head: <sha>`.
 *
 * Where: on `landing`, the branch the caller decided once from the project's repository kind
 * (domain `landingBranch`): `target` itself, or for a user's working copy the integration
 * branch `overseer/<target>` (`integration: true`), which starts at `target` the first time and
 * afterwards builds on itself. Overseer never writes to a user's working tree, and pushing to a
 * checked-out branch would either be refused or (with `receive.denyCurrentBranch=updateInstead`)
 * rewrite it, so landing on `target` while a working tree of the local remote has it checked
 * out is refused with the fix (a project registered before repository kinds were recorded).
 *
 * How, per attempt, against a freshly fetched mirror (with `mirrorFirst`, a first attempt on the
 * mirror as it is, which may only land by its compare-and-swap push):
 * 1. read source, target and landing branch with their trees and commits (from the mirror's ref
 *    files and loose commits, else one `for-each-ref`: landed-commit.ts readBranchCommits),
 *    which gives the reviewed head's tree, parents and message when the source branch is at it
 *    (else one `show`), and their merge base (no process when the landing branch is the head's
 *    parent, the usual one-commit task);
 * 2. the landing branch already holds the head (a commit since the merge base carries its
 *    `Reviewed-head`, or the head is an ancestor) → done, nothing pushed: a redelivered approve
 *    job lands once;
 * 3. the integrated tree: the head's own when the landing branch has not moved since the task
 *    branched (`fastForward`: exactly the reviewed tree), else the three-way merge of the two
 *    (`git merge-tree --write-tree`, no checkout; on git < 2.38 or with
 *    `mergeMethod: "worktree"`, a merge in a temporary worktree under `workDir`). A conflict is
 *    an answer, not an error: the files and git's messages are returned, nothing is pushed;
 * 4. by `strategy`:
 *    - `squash` (default): one commit on the landing branch with the integrated tree — a
 *      linear history, one commit per task;
 *    - `merge` (a reviewed-range merge): the work commit on the merge base with the reviewed
 *      tree, then a merge commit (`message`; parents: landing branch, work commit) with the
 *      integrated tree — or the work commit alone when the landing branch has not moved
 *    (each commit written into the mirror's object store, by git only where loose-commit.ts
 *    would not write git's exact bytes);
 * 5. a result that is not exactly the reviewed tree is handed to `check` (the project's check
 *    command) before anything is pushed; a failing check lands nothing;
 * 6. push with compare-and-swap on the landing branch's old value (pushBranch). A lost race
 *    starts over, at most `maxAttempts` times, from the landing branch as the lost push re-read
 *    it from the remote (a whole fetch only when the source is a branch rather than the pinned
 *    `sourceSha`, or a vanished integration branch must start at `target` again); nothing is
 *    ever forced.
 *
 * Merges read `.gitattributes` from the trees being merged, so a `merge=<driver>` attribute the
 * agent wrote can name a driver — but the program behind a driver comes from configuration
 * only, and no configuration defines one (see run-git.ts).
 */

export interface LandBranchOptions {
  /** The task branch to land. */
  source: string;
  /** The project's main branch: where `landing` starts when it does not exist yet. */
  target: string;
  /** The branch to land on (domain `landingBranch`). Default `target`. */
  landing?: string;
  /**
   * Land exactly this commit (the one the reviewer approved) instead of whatever `source` points
   * at now. It must be in the mirror after a fetch. Default: the source branch's head.
   */
  sourceSha?: string;
  /** Scratch directory for worktree merges (created if missing; nothing is left in it). */
  workDir: string;
  /**
   * Message of the merge commit a `merge` landing makes, and of the work commit when the
   * reviewed head has no message of its own.
   */
  message: string;
  /** Trailers of the landed work commit, over the reviewed head's own (e.g. `Status`, `Reviewed-by`). */
  extraTrailers?: Record<string, string>;
  /** Author and committer of the commits landing makes. */
  author: CommitAuthor;
  /** Fetched attempts before giving up on a branch that keeps moving. Default 5. */
  maxAttempts?: number;
  /** `auto` (default): merge-tree when git ≥ 2.38, else a temporary worktree. */
  mergeMethod?: "auto" | "merge-tree" | "worktree";
  /** How the reviewed work lands: `squash` (one commit) or `merge` (a reviewed-range merge). Default `squash`. */
  strategy?: LandStrategy;
  /**
   * Verifies an integration (a commit in the mirror that is not pushed yet) before it is pushed,
   * e.g. by running the project's check command on its tree. Not called when the landed tree is
   * exactly the reviewed one (the landing branch had not moved). Default none.
   */
  check?: (sha: string) => Promise<LandCheckOutcome>;
  /**
   * Called (and awaited) before each compare-and-swap push, e.g. to log retries. Default none.
   */
  onAttempt?: (attempt: LandAttempt) => void | Promise<void>;
  /** Wraps each push of the landing branch (pushBranch's `guard`: the worker's run fence). */
  guard?: PushGuard | undefined;
  /**
   * First try to land from the mirror as it is, however old, with no fetch: the refs the mirror
   * holds stand in for the remote's only where the push checks them, since that push is
   * compare-and-swap on the landing branch as the mirror has it (the remote moves the branch
   * only if it is still there). So the unfetched attempt only ever lands by a push: a lost race,
   * a conflict, a check to run, a missing commit, work the mirror shows as landed already, or a
   * landing branch still to create falls through to the fetched attempts, and no answer but a
   * pushed landing comes from unfetched refs. Default false: every attempt fetches first.
   */
  mirrorFirst?: boolean;
}

export const LAND_STRATEGIES = ["squash", "merge"] as const;
export type LandStrategy = (typeof LAND_STRATEGIES)[number];

export type LandCheckOutcome = { ok: true } | { ok: false; output: string };

export interface LandAttempt {
  /** 1-based attempt number (with `mirrorFirst`, 1 is the unfetched attempt). */
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
      /**
       * The landed tree is exactly the reviewed one (the landing branch had not moved since the
       * task branched), or the work was already there: nothing was integrated or checked.
       */
      fastForward: boolean;
      /** How the work landed. */
      method: LandStrategy;
    }
  | { kind: "conflict"; files: string[]; details: string; method: LandStrategy }
  /** The integrated commit `sha` failed `check`; nothing was pushed. */
  | { kind: "check_failed"; sha: string; output: string; method: LandStrategy };

export const DEFAULT_LAND_ATTEMPTS = 5;

/** How work lands and how trees are merged unless told otherwise, defined once (the worker's too). */
export const LAND_DEFAULTS = Object.freeze({
  strategy: "squash" as LandStrategy,
  /** `git merge-tree --write-tree` where this git has it, else a scratch worktree. */
  mergeMethod: "auto" as const,
});

type MergeOutcome = { kind: "merged"; tree: string } | { kind: "conflict"; files: string[]; details: string };

export async function landBranch(mirror: RepoMirror, options: LandBranchOptions): Promise<LandBranchResult> {
  const source = assertBranchName(options.source, "source");
  const target = assertBranchName(options.target, "target");
  const sourceSha = options.sourceSha === undefined ? undefined : assertSha(options.sourceSha, "sourceSha");
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
  const strategy = options.strategy ?? LAND_DEFAULTS.strategy;
  if (!LAND_STRATEGIES.includes(strategy)) {
    throw new GitInputError(
      "strategy",
      `expected one of ${LAND_STRATEGIES.join(", ")}, received ${JSON.stringify(strategy)}`,
    );
  }
  const landing = options.landing === undefined ? target : assertBranchName(options.landing, "landing");
  const integration = landing !== target;
  const land: Landing = {
    options,
    strategy,
    landing,
    integration,
    env: identityEnv(options.author),
    mergeMessage: buildCommitMessage(options.message, {}),
    // Both answered while the first attempt reads (each is a process the first time): the
    // refusal before anything is decided, the merge method when a merge is needed.
    refusal: handled(integration ? Promise.resolve() : refuseCheckedOutTarget(mirror, target)),
    useMergeTree: handled(
      options.mergeMethod === "merge-tree"
        ? Promise.resolve(true)
        : (options.mergeMethod ?? LAND_DEFAULTS.mergeMethod) === "auto"
          ? hasMergeTreeWriteTree()
          : Promise.resolve(false),
    ),
  };

  const at = { source, target, sourceSha };
  // After a lost push the landing branch was just read from the remote (pushBranch fetches it);
  // with the reviewed head pinned, that branch is all the next attempt decides on, so it needs
  // no fetch of the whole mirror. Unless it is an integration branch that is gone: its start,
  // `target`, has to be read again.
  const readAfterLoss = (lost: AttemptOutcome) =>
    lost?.kind === "lost" && sourceSha !== undefined && (lost.actualSha !== null || !integration);
  let fetch = true;
  // The mirror is tried as it is first: a landing branch that moved since the mirror last saw it
  // loses the compare-and-swap push, and the fetched attempts below take over. Only a pushed
  // landing comes out of it: any other answer (a conflict, a check to run, a missing commit,
  // work already there) is given by a fetched attempt, so nothing is decided on stale refs.
  if (options.mirrorFirst === true) {
    const result = await attemptLanding(mirror, land, at, { attempt: 1, fetched: false, fetch: false });
    if (result?.kind === "landed") return result;
    fetch = !readAfterLoss(result);
  }
  const offset = options.mirrorFirst === true ? 1 : 0;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const how = { attempt: attempt + offset, fetched: true, fetch };
    const result = await attemptLanding(mirror, land, at, how);
    if (result !== null && result.kind !== "lost") return result;
    fetch = !readAfterLoss(result);
  }
  throw new LandRaceError(landing, maxAttempts);
}

/**
 * One attempt's answer; `lost`: the push lost its compare-and-swap race and the landing branch
 * is `actualSha` on the remote (and in the mirror); null: an unfetched attempt could not decide.
 */
type AttemptOutcome = LandBranchResult | { kind: "lost"; actualSha: string | null } | null;

/**
 * One attempt: fetch (with `fetch`), integrate, push. `fetched`: the refs read are the remote's
 * (the mirror was fetched, or the landing branch re-read after a lost push), so any answer may
 * be given; false: the mirror as it is, which may only land.
 */
async function attemptLanding(
  mirror: RepoMirror,
  land: Landing,
  at: { source: string; target: string; sourceSha: string | undefined },
  how: { attempt: number; fetched: boolean; fetch: boolean },
): Promise<AttemptOutcome> {
  const { source, target, sourceSha } = at;
  const { options, landing, integration, strategy } = land;
  // One read of the three branches with their trees and commits; the reviewed head is the
  // source branch's when the branch is at it (the usual case), else a second read (which also
  // verifies that it is a commit the mirror has).
  const reads = (async () => {
    if (how.fetch) await mirror.ensure();
    const listed = await readBranchCommits(mirror, [source, target, landing]);
    const tips = listed?.tips ?? (await mirror.branchTips([source, target, landing]));
    const sourceHead = sourceSha ?? tips.get(source)?.sha;
    const listedHead = listed?.heads.get(source);
    const head =
      sourceHead === undefined
        ? null
        : listedHead?.sha === sourceHead
          ? listedHead
          : await readReviewedHead(mirror, sourceHead);
    return { tips, sourceHead, head };
  })();
  // A refused target wins over whatever the reads found.
  const [refused, read] = await Promise.allSettled([land.refusal, reads]);
  if (refused.status === "rejected") throw refused.reason;
  if (read.status === "rejected") throw read.reason;
  const { tips, sourceHead, head } = read.value;
  if (sourceSha !== undefined && head === null) {
    if (!how.fetched) return null;
    throw new GitInputError(
      "sourceSha",
      `commit ${sourceSha} is not on the remote; push the task branch first`,
    );
  }
  if (!sourceHead || head === null) {
    if (!how.fetched) return null;
    throw new GitInputError(
      "source",
      `branch "${source}" does not exist on the remote; push it before landing`,
    );
  }
  const currentTip = tips.get(landing) ?? null;
  const current = currentTip?.sha ?? null;
  const baseTip = currentTip ?? tips.get(target);
  if (!baseTip) {
    if (!how.fetched) return null;
    throw new GitInputError("target", `branch "${target}" does not exist on the remote`);
  }

  const step = await nextLanding(mirror, land, { head, current, base: baseTip, fetched: how.fetched });
  if (step.kind !== "push") return step.result;
  const { next, fastForward } = step;
  await options.onAttempt?.({
    attempt: how.attempt,
    branch: landing,
    expectedOldSha: current,
    sha: next,
    fastForward,
  });
  const pushed = await pushBranch(mirror, {
    branch: landing,
    sha: next,
    expectedOldSha: current,
    guard: options.guard,
  });
  return pushed.ok
    ? { kind: "landed", sha: next, branch: landing, integration, fastForward, method: strategy }
    : { kind: "lost", actualSha: pushed.actualSha };
}

/** What one landing holds for all its attempts. */
interface Landing {
  options: LandBranchOptions;
  strategy: LandStrategy;
  landing: string;
  integration: boolean;
  env: Record<string, string>;
  mergeMessage: string;
  /** Rejects when landing on `target` would write to a user's working tree. */
  refusal: Promise<void>;
  useMergeTree: Promise<boolean>;
}

/** `promise`, marked handled: awaited only on some paths, its rejection must not go unhandled. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

type LandingStep =
  | { kind: "push"; next: string; fastForward: boolean }
  /** `result` null: an unfetched attempt that cannot decide (a fetched attempt follows). */
  | { kind: "done"; result: LandBranchResult | null };

/** The commit one attempt pushes (made in the mirror, checked), or the answer without a push. */
async function nextLanding(
  mirror: RepoMirror,
  land: Landing,
  at: { head: ReviewedHead; current: string | null; base: BranchTip; fetched: boolean },
): Promise<LandingStep> {
  const { head, current } = at;
  const sourceHead = head.sha;
  const base = at.base.sha;
  // On an unfetched mirror only a clean landing is worth trying; the rest waits for a fetch.
  const undecided: LandingStep = { kind: "done", result: null };
  // A landing branch to create starts at `target` as the remote has it now.
  if (current === null && !at.fetched) return undecided;
  const { strategy, landing, integration } = land;
  const done = (sha: string): LandingStep => ({
    kind: "done",
    result: { kind: "landed", sha, branch: landing, integration, fastForward: true, method: strategy },
  });
  // The head on the landing branch (the usual single commit of a task): base is the merge base.
  const mergeBase =
    base === sourceHead || head.parents.includes(base) ? base : await readMergeBase(mirror, base, sourceHead);
  if (mergeBase === null) {
    if (!at.fetched) return undecided;
    const details = `"${land.options.source}" and "${landing}" have no common history; refusing to merge unrelated histories`;
    return { kind: "done", result: { kind: "conflict", files: [], details, method: strategy } };
  }
  // The work is there already: the head itself (a task branch without commits of its own), or
  // a landed commit naming it.
  if (mergeBase === sourceHead || (await alreadyLanded(mirror, mergeBase, base, sourceHead))) {
    // Seen on unfetched refs only: the branch may have been reset since; a fetch tells.
    if (!at.fetched) return undecided;
    // The integration branch does not exist yet: create it at target.
    return current === null ? { kind: "push", next: base, fastForward: true } : done(current);
  }
  const fastForward = mergeBase === base;
  let tree = head.tree;
  if (!fastForward) {
    const merged = (await land.useMergeTree)
      ? await mergeWithMergeTree(mirror, base, sourceHead)
      : await mergeInWorktree(mirror, land.options.workDir, base, sourceHead, land.mergeMessage, land.env);
    if (merged.kind === "conflict")
      return at.fetched ? { kind: "done", result: { ...merged, method: strategy } } : undecided;
    tree = merged.tree;
  }
  // Everything the head changes is on the landing branch already.
  if (current !== null && tree === at.base.tree) return at.fetched ? done(current) : undecided;
  const work = (parent: string, workTree: string) =>
    commitReviewedWork(mirror, head, {
      tree: workTree,
      parent,
      extra: land.options.extraTrailers ?? {},
      fallbackMessage: land.options.message,
      env: land.env,
    });
  let next: string;
  if (strategy === "squash" || fastForward) next = await work(base, tree);
  else {
    const reviewed = await work(mergeBase, head.tree);
    next = await commitTree(mirror, tree, [base, reviewed], land.mergeMessage, land.env);
  }
  if (!fastForward && land.options.check) {
    // The check runs once, on an integration of the landing branch as fetched.
    if (!at.fetched) return undecided;
    const checked = await land.options.check(next);
    if (!checked.ok) {
      return {
        kind: "done",
        result: { kind: "check_failed", sha: next, output: checked.output, method: strategy },
      };
    }
  }
  return { kind: "push", next, fastForward };
}

/** Pushing to a branch checked out in a working tree of the local remote would rewrite the user's work. */
async function refuseCheckedOutTarget(mirror: RepoMirror, target: string): Promise<void> {
  if (mirror.location.kind !== "local" || (await plainBareWithoutCheckouts(mirror.location.path))) return;
  const { branches } = await checkedOutBranches(mirror.location.path, mirror.gitTimeoutMs);
  if (!branches.has(target)) return;
  throw new GitInputError(
    "target",
    `branch "${target}" is checked out in the working copy ${mirror.location.path}, and Overseer never writes to a working tree; run \`overseer init --project ID --update\` so the project is recorded as a working copy and its work lands on overseer/${target}`,
  );
}

async function readMergeBase(mirror: RepoMirror, a: string, b: string): Promise<string | null> {
  const result = await mirror.git(["merge-base", a, b], { okExitCodes: [1] });
  const sha = result.stdout.trim();
  return result.exitCode === 0 && sha !== "" ? sha : null;
}

async function treeOf(mirror: RepoMirror, commit: string): Promise<string> {
  return (await mirror.git(["rev-parse", "--verify", "--end-of-options", `${commit}^{tree}`])).stdout.trim();
}

/** The three-way merge of `base` and `source` as a tree (`git merge-tree --write-tree`, no checkout). */
async function mergeWithMergeTree(mirror: RepoMirror, base: string, source: string): Promise<MergeOutcome> {
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
  return { kind: "merged", tree: assertSha(tree, "merge-tree result") };
}

/** The same merge in a temporary worktree (git < 2.38); its merge commit is a scratch object, never pushed. */
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
    if (merged.exitCode === 0) return { kind: "merged", tree: await treeOf(mirror, await worktree.head()) };
    const files = await unmergedFiles(git);
    if (files.length === 0) throw failedWithoutConflicts(["merge", source], merged, worktree);
    const details = conflictLines(`${merged.stdout}${merged.stderr}`);
    return { kind: "conflict", files, details };
  });
}
