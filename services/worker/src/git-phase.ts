import path from "node:path";
import {
  checkpointRef,
  fastForwardPush,
  GitError,
  LAND_DEFAULTS,
  type LandCheckOutcome,
  landBranch,
  type PushGuard,
  protectedBranchRefusal,
  pushBranch,
  type RepoMirror,
  type Worktree,
} from "@overseer/git";
import { jobLandingBranch, type RunJob, type RunOutcome } from "@overseer/run-contract";
import { type Commits, NO_COMMITS, type PhaseClock, type RunExecutorDeps } from "./run-context.ts";
import type { OpenedRunFence } from "./run-fence.ts";

/** The scope check of a run whose agent finished (run-executor.ts startScopeCheck). */
export interface ScopeCheck {
  /** The checkout is staged into its index (at once for a review, which commits nothing). */
  staged: Promise<void>;
  /** The paths out of scope (none for a review), once the run's ownership is confirmed too. */
  checked: Promise<string[]>;
}

export type WorkRecord =
  | { kind: "ok"; commits: Commits }
  /** Approved, but not landed: a real conflict with the main branch or a failed check. */
  | { kind: "land-failed"; reason: "conflict" | "check_failed"; files: string[]; details: string }
  | { kind: "lost-race"; detail: string }
  /** The remote refused the landing because the branch is protected: a configuration error. */
  | { kind: "protected"; message: string };

/**
 * Phase 4, the git side of a transition (docs/architecture.md, Git): one commit per transition that changed files, with the
 * agent's message and the Task/Agent/Role/Action/Status trailers, pushed by compare-and-swap.
 */
export async function recordWork(
  job: RunJob,
  deps: Pick<RunExecutorDeps, "logger" | "mirrorFreshness" | "fence">,
  mirror: RepoMirror,
  worktree: Worktree,
  outcome: RunOutcome,
  ctx: {
    taskHead: string | null;
    base: string;
    runDir: string;
    /** The scope check started when the checkout became final (run-executor.ts). */
    scope: ScopeCheck;
    /** The checkout started on a prepared merge of the main branch: amend it (merge-main.ts). */
    mergedMain?: boolean;
    /** The project's check command on a non-fast-forward integration (landing-check.ts). */
    check?: ((sha: string) => Promise<LandCheckOutcome>) | undefined;
    /** Laps `scope_check`, `commit`, `push` and `land` as each is done. */
    clock?: Pick<PhaseClock, "lap">;
  },
): Promise<WorkRecord> {
  const lap = (phase: "scope_check" | "commit" | "push" | "land") => ctx.clock?.lap(phase);
  const checked = async () => {
    const violations = await ctx.scope.checked;
    lap("scope_check");
    return violations;
  };
  const transition = outcome.kind === "transition" ? outcome.transition : null;
  const trailers = (status: string) => ({
    Task: job.taskId,
    Agent: job.agentId,
    Role: job.role,
    Action: job.action,
    Status: status,
  });

  if (transition?.kind === "approve") {
    if (ctx.taskHead === null) {
      await checked();
      return { kind: "ok", commits: NO_COMMITS };
    }
    // The landing's fence opens beside the ownership check, as a commit's does (below): its
    // read and row locks are done by the time the landing or pull request branch is pushed.
    // What the landing's last attempt pushed, for the fence to record once a push went through.
    const attempted: LandAttempted = { last: null };
    const fence = deps.fence?.open(job, { sourceSha: ctx.taskHead, landed: () => attempted.last });
    try {
      await checked();
      return await landApproved(job, deps, mirror, { ...ctx, taskHead: ctx.taskHead, attempted }, lap, fence);
    } finally {
      await fence?.close();
    }
  }
  if (job.action === "review" || !job.gitCommits) {
    await checked();
    return { kind: "ok", commits: { ...NO_COMMITS, branchHead: ctx.taskHead } };
  }
  // The commit records exactly what the scope check lists: the index `stage()` wrote.
  await ctx.scope.staged;

  // The fence's transaction opens once the commit is asked for (the commit is on the critical
  // path, the fence's round trips are not): its read and row locks are done by the time the
  // push is ready, which then waits for no round trip (run-fence.ts open).
  let fence: OpenedRunFence | undefined;
  try {
    return await commitWork(job, deps, mirror, worktree, outcome, ctx, {
      transition,
      trailers,
      checked,
      lap,
      openFence: () => {
        fence = deps.fence?.open(job);
        return fence?.guard;
      },
    });
  } finally {
    await (fence as OpenedRunFence | undefined)?.close();
  }
}

/** What `commitWork` shares with recordWork. */
interface CommitSteps {
  transition: Extract<RunOutcome, { kind: "transition" }>["transition"] | null;
  trailers: (status: string) => Record<string, string>;
  /** The scope check's violations, lapped. */
  checked: () => Promise<string[]>;
  lap: (phase: "scope_check" | "commit" | "push" | "land") => void;
  /** Opens the run's fence (once, right after the commit is asked for) and returns its push guard. */
  openFence: () => PushGuard | undefined;
}

/** The hand-in's commit and push, or the checkpoint of unfinished work (recordWork). */
async function commitWork(
  job: RunJob,
  deps: Pick<RunExecutorDeps, "logger">,
  mirror: RepoMirror,
  worktree: Worktree,
  outcome: RunOutcome,
  ctx: { taskHead: string | null; base: string; mergedMain?: boolean },
  steps: CommitSteps,
): Promise<WorkRecord> {
  const { transition, trailers, checked, lap } = steps;
  // A planner's proposal is handed in like a submit (its review checks out the same head).
  const handIn =
    transition?.kind === "submit"
      ? transition.message.trim() || `Work on ${job.taskId}`
      : transition?.kind === "plan"
        ? `Plan proposed for ${job.taskId}`
        : transition?.kind === "complete"
          ? `Objective met: evidence proposed by ${job.taskId}`
          : null;
  // A hand-in is committed while the scope check lists the paths (it reads the same index): the
  // usual answer, no violation, then has its commit at once. A violation drops that commit
  // (nothing of it was pushed) and records the checkpoint below on the checkout's base instead.
  const handInCommit =
    handIn === null
      ? null
      : worktree.commit({
          message: handIn,
          trailers: trailers("review"),
          author: job.author,
          amend: ctx.mergedMain === true,
          staged: true,
        });
  handInCommit?.catch(() => undefined);
  const guard = steps.openFence();
  const violations = await checked();
  if (handInCommit !== null && violations.length === 0) {
    const sha = await handInCommit;
    lap("commit");
    const head = sha ?? ctx.base;
    if (head !== ctx.taskHead) {
      const pushed = await pushBranch(mirror, {
        branch: job.taskBranch,
        sha: head,
        expectedOldSha: ctx.taskHead,
        guard,
      });
      lap("push");
      if (!pushed.ok) {
        return {
          kind: "lost-race",
          detail: `${job.taskBranch} moved concurrently (now ${pushed.actualSha ?? "deleted"}); the run will be retried on the new head`,
        };
      }
    }
    return { kind: "ok", commits: { ...NO_COMMITS, commitSha: sha, branchHead: head } };
  }

  // Escalation, timeout, failure or scope violation: keep the unfinished work as a
  // checkpoint that is never merged (docs/state-machine.md rules 4 and 10: nothing is rolled back).
  const message =
    transition?.kind === "escalate"
      ? `Checkpoint of ${job.taskId}: ${transition.reason}`
      : `Checkpoint of ${job.taskId} (${outcome.kind === "transition" ? transition?.kind : outcome.kind === "violation" ? outcome.violation : outcome.kind})`;
  if (handInCommit !== null) {
    // Whether it was made or failed, the checkpoint builds on the base, as if it never was.
    await handInCommit.catch(() => undefined);
    await worktree.resetHead(ctx.base);
  }
  const sha = await worktree.commit({
    message,
    trailers: trailers("blocked"),
    author: job.author,
    staged: true,
  });
  lap("commit");
  if (sha === null) return { kind: "ok", commits: { ...NO_COMMITS, branchHead: ctx.taskHead } };
  const ref = checkpointRef(job.taskId, job.agentId);
  const pushed = await pushBranch(mirror, {
    branch: ref,
    sha,
    expectedOldSha: null,
    guard,
  });
  lap("push");
  if (!pushed.ok)
    deps.logger.warn({ runId: job.runId, ref }, "checkpoint branch already existed; kept the existing one");
  return {
    kind: "ok",
    commits: { ...NO_COMMITS, checkpointRef: ref, commitSha: sha, branchHead: ctx.taskHead },
  };
}

/** The commit a landing's latest attempt pushes onto its branch (null before its first push). */
interface LandAttempted {
  last: { branch: string; sha: string } | null;
}

/** An approve: the reviewed head lands on the landing branch, or goes to its pull request branch. */
async function landApproved(
  job: RunJob,
  deps: Pick<RunExecutorDeps, "mirrorFreshness">,
  mirror: RepoMirror,
  ctx: {
    taskHead: string;
    runDir: string;
    check?: ((sha: string) => Promise<LandCheckOutcome>) | undefined;
    attempted?: LandAttempted;
  },
  lap: (phase: "push" | "land") => void,
  fence: OpenedRunFence | undefined,
): Promise<WorkRecord> {
  const guard = fence?.guard;
  const pullRequestBranch = job.landing?.pullRequestBranch;
  if (pullRequestBranch !== undefined) {
    const published = await publishForReview(job, deps, mirror, pullRequestBranch, ctx.taskHead, guard);
    lap("push");
    return published;
  }
  // The project's check command may run for minutes: the run's rows are not held meanwhile
  // (the fence closes; the push after the check opens its own, read then).
  const check = ctx.check;
  const landed = await protectedAsRefusal(
    job,
    landBranch(mirror, {
      source: job.taskBranch,
      target: job.mainBranch,
      landing: jobLandingBranch(job),
      sourceSha: ctx.taskHead,
      workDir: path.join(ctx.runDir, "land"),
      message: `Land ${job.taskId} on ${jobLandingBranch(job)}\n\nApproved by ${job.agentId}.`,
      // The landed commit keeps the worker's trailers of the reviewed head; the task is its own.
      extraTrailers: { Task: job.taskId, Status: "approved", "Reviewed-by": job.agentId },
      author: job.author,
      strategy: job.landing?.strategy ?? LAND_DEFAULTS.strategy,
      guard,
      // What each attempt pushes: the fence records the landed commit of the push that went through.
      onAttempt: ({ branch, sha }) => {
        if (ctx.attempted) ctx.attempted.last = { branch, sha };
      },
      // A first try without a fetch, however old the mirror: it only ever lands, by the
      // compare-and-swap push on the landing branch as the mirror has it; a branch that moved
      // since (another worker's landing, a person's commit) is fetched and tried again.
      mirrorFirst: true,
      ...(check
        ? {
            check: async (sha: string) => {
              await fence?.close();
              return check(sha);
            },
          }
        : {}),
    }),
  );
  if (landed.kind === "protected") return landed;
  lap("land");
  if (landed.kind === "conflict") {
    return { kind: "land-failed", reason: "conflict", files: landed.files, details: landed.details };
  }
  if (landed.kind === "check_failed") {
    return { kind: "land-failed", reason: "check_failed", files: [], details: landed.output };
  }
  markSynced(deps, job, mirror);
  return {
    kind: "ok",
    commits: {
      ...NO_COMMITS,
      landedSha: landed.sha,
      landedBranch: landed.branch,
      branchHead: ctx.taskHead,
    },
  };
}

/**
 * A landing the remote refuses because the branch is protected (GitHub GH006, GitLab's and
 * Gitea/Forgejo's words: `protectedBranchRefusal`) is no work for an agent and no retry changes
 * it: the run ends as a configuration error (rule 7: the task waits, the project pauses) whose
 * message names the fix, landing through pull requests. Other git errors stay errors.
 */
async function protectedAsRefusal<T>(
  job: RunJob,
  landing: Promise<T>,
): Promise<T | { kind: "protected"; message: string }> {
  try {
    return await landing;
  } catch (error) {
    const words = error instanceof GitError ? protectedBranchRefusal(error.stderr) : null;
    if (words === null) throw error;
    const branch = jobLandingBranch(job);
    return {
      kind: "protected",
      message: [
        `The remote refused to land ${job.taskId} on ${branch}: the branch is protected ("${words}"), so approved work cannot be pushed to it.`,
        `Fix: land through pull requests — set \`landing.mode: pull_request\` and the project's forge (\`overseer init --project ${job.projectId} --update --forge github|gitlab|gitea --forge-url URL\`, with the token in GITHUB_TOKEN, GITLAB_TOKEN or GITEA_TOKEN), or let Overseer's account push to ${branch}; then \`overseer start --project ${job.projectId}\` reviews the task again and lands it.`,
      ].join(" "),
    };
  }
}

/**
 * pull_request mode (runner config `landing.mode`): the approve lands nothing on the main
 * branch; the reviewed head goes to the pull request branch instead, fast-forward only and
 * inside the same run fence as a landing (only while the run is live, and only the head
 * Postgres recorded at the submit). The coordinator's forge runner opens or updates the pull
 * request from it. A branch someone else moved sideways is never overwritten: the approve
 * does not go through, as a landing conflict would not, and the details say what to do.
 */
async function publishForReview(
  job: RunJob,
  deps: Pick<RunExecutorDeps, "mirrorFreshness">,
  mirror: RepoMirror,
  branch: string,
  head: string,
  guard: PushGuard | undefined,
): Promise<WorkRecord> {
  const pushed = await fastForwardPush(mirror, { branch, sha: head, guard });
  if (pushed.kind === "diverged") {
    return {
      kind: "land-failed",
      reason: "conflict",
      files: [],
      details: `${branch} is at ${pushed.actualSha}, which ${job.taskBranch} (${head}) does not contain: someone pushed to the pull request branch. Merge those commits into ${job.taskBranch}, or delete ${branch} on the remote, so the approved head can be published.`,
    };
  }
  markSynced(deps, job, mirror);
  return {
    kind: "ok",
    commits: { ...NO_COMMITS, branchHead: head, pullRequestHead: { branch, sha: head } },
  };
}

/**
 * A push that went through left the mirror's copy of its branch as the remote has it: recorded
 * for this worker and, beside the mirror, for every worker process on the host (best effort: an
 * unwritten stamp only makes a later checkout fetch).
 */
function markSynced(deps: Pick<RunExecutorDeps, "mirrorFreshness">, job: RunJob, mirror: RepoMirror): void {
  const now = Date.now();
  deps.mirrorFreshness.lastSync.set(job.projectId, now);
  mirror.markSynced(now).catch(() => undefined);
}
