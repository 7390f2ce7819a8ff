import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type MirrorLayout, mergeMainInto, type RepoMirror, type Worktree } from "@overseer/git";
import { agentBinDir } from "@overseer/harness";
import { jobLandingBranch, type RunJob, type RunOutcome } from "@overseer/run-contract";
import { placeCheckoutFiles } from "./checkout-files.ts";
import { mirrorIsFresh, type PhaseClock, type RunExecutorDeps, type RunPaths } from "./run-context.ts";
import { makeRunDir } from "./run-dirs.ts";

export type CheckoutPhase =
  | {
      kind: "ready";
      worktree: Worktree;
      paths: RunPaths;
      /** The task branch head the checkout started from (null: no branch yet). */
      taskHead: string | null;
      /** The commit checked out: the task head, else the landing branch's head, or the prepared merge. */
      base: string;
      /**
       * After a failed landing: the landing branch was merged into the task head (a commit in the
       * mirror only, conflict markers committed in `conflicts`); null otherwise.
       */
      mergedMain: { sha: string; conflicts: string[] } | null;
      /**
       * The prompt the agent gets: the job's, plus a note when the merge of the current main
       * branch conflicts in files the recorded landing failure did not name (main moved since).
       */
      prompt: string;
    }
  | { kind: "misconfigured"; outcome: RunOutcome };

/**
 * Phase 1: a fresh worktree of the task at its current head (or main), with the prompt, the
 * control dir and the project's placed files. `onWorktree` receives the worktree as soon as it
 * exists, so the caller removes it whatever happens next.
 */
export async function prepareCheckout(
  job: RunJob,
  deps: RunExecutorDeps,
  mirror: RepoMirror,
  runDir: string,
  clock: PhaseClock,
  onWorktree: (worktree: Worktree) => void,
): Promise<CheckoutPhase> {
  const paths: RunPaths = {
    runDir,
    checkout: path.join(runDir, "checkout"),
    controlDir: path.join(runDir, "control"),
    promptFile: path.join(runDir, "prompt.md"),
    gitDirs: [],
    agentBinDir: agentBinDir(),
    diskLimitBytes: diskLimitOf(job, deps),
  };
  // The run's private directory first (0700, before the worktree makes its checkout in it);
  // its control dir and the prompt are written before git reads the heads and makes
  // the worktree (the prompt after the merge when a merge of the main branch may add to it).
  // Synchronous: a few small entries, where a promise per call costs the worker more CPU. The
  // run dir is an emptied one of an earlier run when this worker kept one (run-dirs.ts).
  makeRunDir(runDir);
  const inputs: Promise<void>[] = [];
  const writeInputs = (prompt: string) => {
    const written = writeRunInputs(paths, prompt);
    written.catch(() => undefined);
    inputs.push(written);
  };
  if (!job.mergeMain) writeInputs(job.prompt);
  try {
    return await checkoutInto(job, deps, mirror, paths, clock, onWorktree, {
      write: writeInputs,
      written: () => Promise.all(inputs),
    });
  } finally {
    // Nothing is left writing into the run dir once this returns: the caller removes it.
    await Promise.allSettled(inputs);
  }
}

async function checkoutInto(
  job: RunJob,
  deps: RunExecutorDeps,
  mirror: RepoMirror,
  paths: RunPaths,
  clock: PhaseClock,
  onWorktree: (worktree: Worktree) => void,
  inputs: { write(prompt: string): void; written(): Promise<unknown> },
): Promise<CheckoutPhase> {
  // The mirror's config is read once for the heads and the worktree (again only when it could
  // not be read: no mirror before the clone).
  let read: Promise<MirrorLayout> | undefined;
  const layout = (): Promise<MirrorLayout> => {
    if (!read) {
      read = mirror.readLayout();
      read.catch(() => {
        read = undefined;
      });
    }
    return read;
  };
  const unchanged = await refreshMirror(mirror, job, deps, layout);
  // No fetch (the mirror was current): reading the heads counts as checkout.
  if (unchanged === null) clock.lap("fetch");
  const { taskHead, mainHead } = unchanged ?? (await readHeads(job, mirror, layout()));
  let base = taskHead ?? mainHead;
  if (base === null) {
    return {
      kind: "misconfigured",
      outcome: {
        kind: "misconfigured",
        reason: "configuration_error",
        message: `Branch "${job.mainBranch}" does not exist in ${job.repo}; create it with a first commit or fix the project's branch.`,
      },
    };
  }
  const mergedMain = await prepareMergedMain(job, mirror, taskHead, mainHead, paths.runDir);
  if (mergedMain !== null) base = mergedMain.sha;
  const prompt = promptWithConflicts(job, mergedMain);
  if (job.mergeMain) inputs.write(prompt);
  const worktree = await mirror.addWorktree({
    base,
    path: paths.checkout,
    branch: job.taskBranch,
    neverCommit: Object.keys(job.files),
    layout: layout(),
  });
  onWorktree(worktree);
  const dirs = worktree.gitDirs();
  paths.gitDirs = [...new Set([dirs.commonDir, dirs.worktreeGitDir])];
  await placeCheckoutFiles(paths.checkout, job.files);
  await inputs.written();
  clock.lap("checkout");
  return { kind: "ready", worktree, paths, taskHead, base, mergedMain, prompt };
}

/** The run's control dir (empty) and the prompt, inside its private run dir. */
async function writeRunInputs(paths: RunPaths, prompt: string): Promise<void> {
  mkdirSync(paths.controlDir, { mode: 0o700 });
  writeFileSync(paths.promptFile, prompt, { encoding: "utf8", mode: 0o600 });
}

interface Heads {
  /** The task branch's head in the mirror (null: no branch yet). */
  taskHead: string | null;
  /** The landing branch's own head in the mirror (null: nothing landed there yet). */
  landingHead: string | null;
  /**
   * The head every checkout builds on: the landing branch (`overseer/<main>` for a working
   * copy), or, before anything landed there, the main branch it will start from (land-branch.ts).
   */
  mainHead: string | null;
}

/** The task branch's and the landing branch's heads in the mirror, in one git process. */
async function readHeads(job: RunJob, mirror: RepoMirror, layout: Promise<MirrorLayout>): Promise<Heads> {
  const landing = jobLandingBranch(job);
  const heads = await mirror.branchHeads([job.taskBranch, landing, job.mainBranch], layout);
  const landingHead = heads.get(landing) ?? null;
  return {
    taskHead: heads.get(job.taskBranch) ?? null,
    landingHead,
    mainHead: landingHead ?? heads.get(job.mainBranch) ?? null,
  };
}

/**
 * The coordinator rendered the prompt with the files of the recorded landing failure; the main
 * branch may have moved since. Files that conflict now but were not named are appended, so
 * the agent never misses a marker.
 */
export function promptWithConflicts(
  job: Pick<RunJob, "prompt" | "mergeMain" | "mainBranch" | "landingBranch">,
  mergedMain: { conflicts: string[] } | null,
): string {
  const named = new Set(job.mergeMain?.files ?? []);
  const unnamed = (mergedMain?.conflicts ?? []).filter((file) => !named.has(file));
  if (unnamed.length === 0) return job.prompt;
  const branch = `\`${jobLandingBranch(job)}\``;
  return [
    job.prompt.trimEnd(),
    "",
    `# Conflicts with the current ${branch}`,
    "",
    named.size === 0
      ? `Merging ${branch} left conflict markers in these files. Resolve them:`
      : `${branch} moved since this task's landing failed: merging it now also left conflict markers in these files. Resolve them too:`,
    ...unnamed.map((file) => `- ${file}`),
    "",
  ].join("\n");
}

/**
 * After a failed landing (`job.mergeMain`), executors and resolvers start from the task branch
 * with the current main branch merged in: a merge commit whose tree holds git's result, with
 * diff3 conflict markers in every conflicted file. The agent sees plain files and a clean
 * `git status`; the prompt names the files. The worker later amends this commit with the
 * agent's work (git-phase.ts), so the markers never reach a pushed branch. Null when there is
 * nothing to merge (no task branch yet, main already in it, a review).
 */
async function prepareMergedMain(
  job: RunJob,
  mirror: RepoMirror,
  taskHead: string | null,
  mainHead: string | null,
  runDir: string,
): Promise<{ sha: string; conflicts: string[] } | null> {
  if (!job.mergeMain || job.action === "review" || taskHead === null || mainHead === null) return null;
  const merged = await mergeMainInto(mirror, {
    head: taskHead,
    main: mainHead,
    message: `Merge ${jobLandingBranch(job)} into ${job.taskBranch}`,
    author: job.author,
    workDir: path.join(runDir, "merge-main"),
  });
  return merged.kind === "merged" ? { sha: merged.sha, conflicts: merged.conflicts } : null;
}

/** The smaller of the worker's disk limit and the project's. */
export function diskLimitOf(job: RunJob, deps: Pick<RunExecutorDeps, "diskLimitBytes">): number {
  return job.sandbox.diskMb === undefined
    ? deps.diskLimitBytes
    : Math.min(deps.diskLimitBytes, job.sandbox.diskMb * 1024 * 1024);
}

/**
 * Brings the mirror up to date only when it may be behind. A fetch is skipped when:
 *
 * - the mirror already holds the task branch head Postgres knows (`expectedTaskHead`: reviews,
 *   redos): the exact commit to work on is there; or
 * - a task without a branch yet, when the mirror was fetched or pushed within the freshness
 *   window (OVERSEER_MIRROR_FRESH_MS; by this worker or any process sharing the mirror,
 *   RepoMirror.syncedAt; never under pull requests, whose merges happen on the forge) AND its
 *   landing branch is at the newest landing Postgres knows of (`expectedBase`, read with the
 *   run's start), when the job names one for that branch.
 *
 * The guarantee a skip keeps: a new task never starts from a landing branch older than the
 * newest landing Postgres had recorded when the run's start was read (run fence,
 * `landing_seq`), and it never trusts the mirror for a change made outside Overseer (a person's
 * push) longer than today: only within the freshness window since the mirror last reflected
 * the remote; 0 always fetches. A mirror behind Postgres's landing, a job without
 * `expectedBase` past the window, or a mirror that cannot be read: fetch, as before.
 * Returns the heads it read when it did not fetch (still current), else null.
 */
async function refreshMirror(
  mirror: RepoMirror,
  job: RunJob,
  deps: RunExecutorDeps,
  layout: () => Promise<MirrorLayout>,
): Promise<Heads | null> {
  const freshness = deps.mirrorFreshness;
  // A merge of the main branch needs the main branch as it is now: always fetch. A mirror
  // that cannot be read (not cloned yet) is fetched.
  const local = job.mergeMain ? undefined : await readHeads(job, mirror, layout()).catch(() => undefined);
  if (local !== undefined) {
    const { taskHead } = local;
    if (job.expectedTaskHead !== null && taskHead === job.expectedTaskHead) return local;
    if (job.expectedTaskHead === null && taskHead === null && baseAsRecorded(job, local)) {
      // This worker's own record first; the mirror's (one stat) when that one is not recent.
      if (mirrorIsFresh(freshness, job)) return local;
      if (freshness.freshMs > 0 && mirrorIsFresh(freshness, job, Date.now(), await mirror.syncedAt()))
        return local;
    }
  }
  const started = Date.now();
  await mirror.ensure();
  freshness?.lastSync.set(job.projectId, started);
  return null;
}

/**
 * Whether the mirror's landing branch is where Postgres's newest landing put it (`expectedBase`),
 * or the job names none for this branch (an older coordinator, nothing landed yet, a landing
 * branch that changed since): then the freshness window alone decides, as before.
 */
export function baseAsRecorded(
  job: Pick<RunJob, "expectedBase" | "landingBranch" | "mainBranch">,
  heads: Pick<Heads, "landingHead">,
): boolean {
  const expected = job.expectedBase;
  if (!expected || expected.branch !== jobLandingBranch(job)) return true;
  return heads.landingHead === expected.sha;
}
