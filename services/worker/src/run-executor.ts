/**
 * One run, start to finish, on a stateless worker:
 *
 *   fetch mirror → worktree at the task's base → place files → setup hook
 *   → harness in the sandbox (prompt on stdin, transition from the control dir)
 *   → after_run hook → changed paths vs scope → commit + CAS push (submit), checkpoint
 *   (escalate, timeout, failure) or land (approve) → RunResult
 *
 * Nothing here touches Postgres: the coordinator applies the result. Git always runs on the
 * host with hardened settings (no hooks, fsmonitor, filters from the checkout); the agent
 * only ever runs inside the sandbox.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { createRedactor, type Logger } from "@overseer/config";
import { checkpointRef, landBranch, pushBranch, type RepoMirror, type Worktree } from "@overseer/git";
import {
  agentBinDir,
  buildHarnessEnv,
  type ControlTransition,
  expandArgv,
  HarnessNotConfiguredError,
  resolveExecutable,
  runHarness,
  type WrapCommand,
} from "@overseer/harness";
import { RUN_JOB_VERSION, type RunJob, type RunOutcome, type RunResult } from "@overseer/queue";
import { placeCheckoutFiles } from "./checkout-files.ts";
import { runHook } from "./hook-runner.ts";
import { scopeViolations } from "./scope-checker.ts";
import { refusedTransition } from "./transition-policy.ts";

export interface RunExecutorDeps {
  workerId: string;
  dataDir: string;
  logger: Logger;
  mirrorFor(job: RunJob): RepoMirror;
  /** Builds the sandbox wrapper for this run (paths it must see), or undefined for none. */
  sandboxFor(job: RunJob, paths: RunPaths): Promise<WrapCommand | undefined>;
  killGraceMs: number;
  maxOutputBytes: number;
  /** Live output sink (already redacted). */
  onOutput?(job: RunJob, chunk: string): void;
  /**
   * Mirror freshness per project: when it was last fetched or pushed, and how recent is
   * recent enough to skip the fetch before a new task's checkout (0 = always fetch).
   */
  mirrorFreshness?: { lastSync: Map<string, number>; freshMs: number };
  /** Takes background work (checkout removal) the caller awaits before shutting down. */
  defer?(work: Promise<unknown>): void;
  /**
   * Fencing before any git side effect (commit, push, landing): throws `RunOwnershipLostError`
   * when this delivery no longer owns the run (its job was redelivered elsewhere).
   */
  confirmOwnership?(job: RunJob): Promise<void>;
}

export interface RunPaths {
  runDir: string;
  checkout: string;
  controlDir: string;
  inputDir: string;
  promptFile: string;
  /** The worktree's git metadata, bound read-only into the sandbox. */
  gitDirs: string[];
  /** Bundled commands (`overseer-agent`, the fake harness), bound read-only. */
  agentBinDir: string;
}

interface Commits {
  commitSha: string | null;
  branchHead: string | null;
  landedSha: string | null;
  landedBranch: string | null;
  checkpointRef: string | null;
}

const NO_COMMITS: Commits = {
  commitSha: null,
  branchHead: null,
  landedSha: null,
  landedBranch: null,
  checkpointRef: null,
};

export async function executeRun(
  job: RunJob,
  deps: RunExecutorDeps,
  signal?: AbortSignal,
): Promise<RunResult> {
  const pickedAt = Date.now();
  const phases: Record<string, number> = {};
  let lapAt = performance.now();
  const lap = (phase: string) => {
    const now = performance.now();
    phases[phase] = Math.round((now - lapAt) * 10) / 10;
    lapAt = now;
  };
  const redact = createRedactor(job.secretValues);
  const log = deps.logger.child({
    runId: job.runId,
    projectId: job.projectId,
    taskId: job.taskId,
    action: job.action,
  });
  const runDir = path.join(deps.dataDir, "runs", `${job.runId}-${randomBytes(3).toString("hex")}`);
  const mirror = deps.mirrorFor(job);
  let worktree: Worktree | null = null;
  const finish = (
    outcome: RunOutcome,
    extra: Partial<Omit<RunResult, "outcome">> & { spawnedAt?: number | null; exitedAt?: number | null } = {},
  ): RunResult => ({
    v: RUN_JOB_VERSION,
    kind: "run-result",
    runId: job.runId,
    projectId: job.projectId,
    workerId: deps.workerId,
    outcome,
    scopeViolations: extra.scopeViolations ?? [],
    ...NO_COMMITS,
    ...pickCommits(extra),
    exitCode: extra.exitCode ?? null,
    signal: extra.signal ?? null,
    durationMs: extra.durationMs ?? 0,
    output: extra.output ?? "",
    outputTruncated: extra.outputTruncated ?? false,
    timing: {
      enqueuedAt: job.enqueuedAt,
      pickedAt,
      spawnedAt: extra.spawnedAt ?? null,
      exitedAt: extra.exitedAt ?? null,
      reportedAt: Date.now(),
      phases,
    },
  });

  try {
    const unchanged = await refreshMirror(mirror, job, deps);
    lap("fetch");
    const [taskHead, mainHead] = await Promise.all([
      unchanged ? unchanged.taskHead : mirror.resolveRef(job.taskBranch),
      mirror.resolveRef(job.mainBranch),
    ]);
    const base = taskHead ?? mainHead;
    if (base === null) {
      return finish({
        kind: "misconfigured",
        reason: "configuration_error",
        message: `Branch "${job.mainBranch}" does not exist in ${job.repo}; create it with a first commit or fix the project's branch.`,
      });
    }
    const paths: RunPaths = {
      runDir,
      checkout: path.join(runDir, "checkout"),
      controlDir: path.join(runDir, "control"),
      inputDir: path.join(runDir, "input"),
      promptFile: path.join(runDir, "input", "prompt.md"),
      gitDirs: [],
      agentBinDir: agentBinDir(),
    };
    await mkdir(paths.controlDir, { recursive: true, mode: 0o700 });
    await mkdir(paths.inputDir, { recursive: true, mode: 0o700 });
    await writeFile(paths.promptFile, job.prompt, { encoding: "utf8", mode: 0o600 });
    worktree = await mirror.addWorktree({
      base,
      path: paths.checkout,
      branch: job.taskBranch,
      neverCommit: Object.keys(job.files),
    });
    const dirs = worktree.gitDirs();
    paths.gitDirs = [...new Set([dirs.commonDir, dirs.worktreeGitDir])];
    await placeCheckoutFiles(paths.checkout, job.files);
    lap("checkout");

    const wrap = await deps.sandboxFor(job, paths);
    const env = buildHarnessEnv({
      base: baseEnv(job),
      projectRoot: paths.checkout,
      taskId: job.taskId,
      role: job.role,
      agentId: job.agentId,
      action: job.action,
      promptFile: paths.promptFile,
      controlDir: paths.controlDir,
      pathPrepend: [paths.agentBinDir],
    });
    const hookOptions = {
      cwd: paths.checkout,
      env,
      killGraceMs: deps.killGraceMs,
      redact,
      wrap,
      maxOutputBytes: 64 * 1024,
      signal,
    };
    if (job.hooks.setup) {
      const hook = await runHook({
        ...hookOptions,
        argv: job.hooks.setup.argv,
        timeoutMs: job.hooks.setup.timeoutMs,
      });
      if (!hook.ok) {
        return finish(
          {
            kind: "no-transition",
            crashed: false,
            detail: `setup hook failed (${describeHook(hook)}):\n${hook.output}`,
          },
          { output: hook.output },
        );
      }
    }

    const argv = expandArgv(job.argv, {
      root: paths.checkout,
      task: job.taskId,
      role: job.role,
      agent: job.agentId,
      action: job.action,
      prompt_file: paths.promptFile,
    });
    // Resolve the harness on the host first: the sandbox binds the system paths at the same
    // places, and a clear "not configured" beats a sandbox's exec error.
    if (resolveExecutable(argv[0] as string, env.PATH) === null) {
      return finish({
        kind: "misconfigured",
        reason: "harness_not_configured",
        message: new HarnessNotConfiguredError(argv[0] as string, "not_found", `PATH=${env.PATH ?? ""}`)
          .message,
      });
    }
    lap("prepare");
    let harness: Awaited<ReturnType<typeof runHarness>>;
    try {
      harness = await runHarness({
        argv,
        cwd: paths.checkout,
        env,
        prompt: job.prompt,
        controlDir: paths.controlDir,
        timeoutMs: job.timeoutMs,
        idleTimeoutMs: job.idleTimeoutMs,
        killGraceMs: deps.killGraceMs,
        watchPaths: job.idleTimeoutMs > 0 ? [paths.checkout] : [],
        maxOutputBytes: deps.maxOutputBytes,
        ...(job.transitionLingerMs !== undefined ? { transitionLingerMs: job.transitionLingerMs } : {}),
        onOutput: deps.onOutput ? (chunk) => deps.onOutput?.(job, chunk) : undefined,
        redact,
        wrap,
        checkExecutable: wrap === undefined,
        signal,
        logger: log,
      });
    } catch (error) {
      if (error instanceof HarnessNotConfiguredError) {
        return finish({ kind: "misconfigured", reason: "harness_not_configured", message: error.message });
      }
      throw error;
    }
    if (harness.aborted) throw new WorkerShutdownError(job.runId);
    lap("harness");
    const observed = {
      exitCode: harness.exitCode,
      signal: harness.signal,
      durationMs: harness.durationMs,
      output: harness.output,
      outputTruncated: harness.outputTruncated,
      spawnedAt: harness.spawnedAt,
      exitedAt: harness.transitionAt ?? harness.endedAt,
    };

    if (job.hooks.afterRun) {
      const hook = await runHook({
        ...hookOptions,
        argv: job.hooks.afterRun.argv,
        timeoutMs: job.hooks.afterRun.timeoutMs,
      });
      if (!hook.ok) {
        return finish(
          {
            kind: "no-transition",
            crashed: false,
            detail: `after_run hook failed (${describeHook(hook)}):\n${hook.output}`,
          },
          { ...observed, output: `${harness.output}\n${hook.output}` },
        );
      }
    }

    const outcome = refuseForbidden(job, outcomeOf(harness, redact), taskHead, log);
    const reviewing = job.action === "review";
    const violations = reviewing
      ? []
      : scopeViolations(await worktree.changedPaths(), job.scope, job.metadataGlobs);
    lap("scope");
    await deps.confirmOwnership?.(job);
    const commits = await recordWork(job, deps, mirror, worktree, outcome, {
      taskHead,
      base,
      runDir,
      violations,
    });
    lap("git");
    if (commits.kind === "conflict") {
      return finish(
        {
          kind: "transition",
          transition: { kind: "reject", feedback: commits.feedback },
          usage: usageOf(harness.transition),
        },
        { ...observed },
      );
    }
    if (commits.kind === "lost-race") {
      return finish({ kind: "no-transition", crashed: false, detail: commits.detail }, observed);
    }
    return finish(outcome, { ...observed, ...commits.commits, scopeViolations: violations });
  } finally {
    // Cleanup is off the critical path: the result is reported while the checkout goes.
    const wt = worktree as Worktree | null;
    const cleanup = (async () => {
      if (wt) await wt.remove().catch((error) => log.warn({ err: error }, "worktree removal failed"));
      await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
    })();
    if (deps.defer) deps.defer(cleanup);
    else await cleanup;
  }
}

/**
 * Brings the mirror up to date only when it may be behind. A fetch is skipped when the
 * mirror already holds the task branch head Postgres knows (reviews, redos: the exact
 * commit to work on is there), or, for a task without a branch yet, when this worker
 * fetched or pushed the project within the freshness window. Otherwise: fetch.
 * Returns the task head it read when it did not fetch (still current), else null.
 */
async function refreshMirror(
  mirror: RepoMirror,
  job: RunJob,
  deps: RunExecutorDeps,
): Promise<{ taskHead: string | null } | null> {
  const freshness = deps.mirrorFreshness;
  const local = await mirror.resolveRef(job.taskBranch).catch(() => undefined);
  if (local !== undefined) {
    if (job.expectedTaskHead !== null && local === job.expectedTaskHead) return { taskHead: local };
    const lastSync = freshness?.lastSync.get(job.projectId);
    const fresh =
      freshness !== undefined &&
      freshness.freshMs > 0 &&
      lastSync !== undefined &&
      Date.now() - lastSync < freshness.freshMs;
    if (job.expectedTaskHead === null && local === null && fresh) return { taskHead: null };
  }
  await mirror.ensure();
  freshness?.lastSync.set(job.projectId, Date.now());
  return null;
}

export class WorkerShutdownError extends Error {
  override readonly name = "WorkerShutdownError";
  constructor(runId: string) {
    super(`run ${runId} was interrupted by a worker shutdown; it will be redelivered`);
  }
}

/**
 * This worker's delivery of the run no longer owns it: the job lock lapsed (the worker froze
 * or lost Redis) and the run was, or will be, redelivered. Nothing more may be pushed,
 * landed or reported for it from here.
 */
export class RunOwnershipLostError extends Error {
  override readonly name = "RunOwnershipLostError";
  constructor(runId: string) {
    super(`run ${runId} is no longer owned by this worker (its job lock lapsed); its outcome is dropped`);
  }
}

/** The harness variables the project allow-lists, read from this worker's environment. */
function baseEnv(job: RunJob): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of job.envAllow) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...job.env };
}

function describeHook(hook: { exitCode: number | null; timedOut: boolean }): string {
  return hook.timedOut ? "timed out" : `exit ${hook.exitCode ?? "by signal"}`;
}

function outcomeOf(
  harness: Awaited<ReturnType<typeof runHarness>>,
  redact: (text: string) => string,
): RunOutcome {
  if (harness.transition) {
    return {
      kind: "transition",
      transition: toQueueTransition(harness.transition, redact),
      usage: usageOf(harness.transition),
    };
  }
  if (harness.timedOut || harness.stalled) {
    return { kind: "timeout", stalled: harness.stalled, seconds: Math.round(harness.durationMs / 1000) };
  }
  const crashed = harness.signal !== null && harness.signal !== "SIGTERM";
  const why = harness.controlError
    ? `its control file was refused: ${harness.controlError}`
    : `exit ${harness.exitCode ?? "-"}${harness.signal ? ` (signal ${harness.signal})` : ""} without calling overseer-agent`;
  return { kind: "no-transition", crashed, detail: `the harness ended without a transition: ${why}` };
}

/**
 * A transition the run may not make becomes a violation before any git work: nothing is
 * landed or pushed for it (an executor's work is kept as a checkpoint), and the coordinator
 * records an incident.
 */
function refuseForbidden(job: RunJob, outcome: RunOutcome, taskHead: string | null, log: Logger): RunOutcome {
  if (outcome.kind !== "transition") return outcome;
  const refused = refusedTransition(job, outcome.transition.kind, taskHead);
  if (refused === null) return outcome;
  log.warn({ transition: outcome.transition.kind, reason: refused }, "refused the agent's transition");
  return { kind: "violation", violation: "forbidden_transition", detail: refused };
}

/** The agent's words, with every configured secret redacted before they reach git, Redis or Postgres. */
function toQueueTransition(t: ControlTransition, redact: (text: string) => string) {
  const r = <T extends string | undefined>(text: T): T => (text === undefined ? text : (redact(text) as T));
  switch (t.kind) {
    case "submit":
      return { kind: "submit" as const, message: r(t.message), summary: r(t.summary) };
    case "approve":
      return { kind: "approve" as const, feedback: r(t.feedback) };
    case "reject":
      return { kind: "reject" as const, feedback: r(t.feedback) };
    case "escalate":
      return {
        kind: "escalate" as const,
        reason: r(t.reason),
        needsUser: t.needs_user,
        category: t.category,
        question: r(t.question),
        options: t.options.map((o) => ({
          id: o.id,
          label: r(o.label),
          description: r(o.description),
          requires_note: o.requires_note,
        })),
      };
  }
}

function usageOf(t: ControlTransition | null) {
  const u = t?.usage;
  if (!u) return undefined;
  return { tokensIn: u.tokens_in, tokensOut: u.tokens_out, costUsd: u.cost_usd };
}

function pickCommits(extra: Partial<Commits>): Partial<Commits> {
  const out: Partial<Commits> = {};
  for (const key of ["commitSha", "branchHead", "landedSha", "landedBranch", "checkpointRef"] as const) {
    if (extra[key] !== undefined) out[key] = extra[key];
  }
  return out;
}

type WorkRecord =
  | { kind: "ok"; commits: Commits }
  | { kind: "conflict"; feedback: string }
  | { kind: "lost-race"; detail: string };

/**
 * Git side of a transition (SPEC §5): one commit per transition that changed files, with the
 * agent's message and the Task/Agent/Role/Action/Status trailers, pushed by compare-and-swap.
 */
async function recordWork(
  job: RunJob,
  deps: RunExecutorDeps,
  mirror: RepoMirror,
  worktree: Worktree,
  outcome: RunOutcome,
  ctx: { taskHead: string | null; base: string; runDir: string; violations: string[] },
): Promise<WorkRecord> {
  const transition = outcome.kind === "transition" ? outcome.transition : null;
  const trailers = (status: string) => ({
    Task: job.taskId,
    Agent: job.agentId,
    Role: job.role,
    Action: job.action,
    Status: status,
  });

  if (transition?.kind === "approve") {
    if (ctx.taskHead === null) return { kind: "ok", commits: NO_COMMITS };
    const landed = await landBranch(mirror, {
      source: job.taskBranch,
      target: job.mainBranch,
      sourceSha: ctx.taskHead,
      workDir: path.join(ctx.runDir, "land"),
      message: `Land ${job.taskId} on ${job.mainBranch}\n\nApproved by ${job.agentId}.`,
      author: job.author,
    });
    if (landed.kind === "conflict") {
      return {
        kind: "conflict",
        feedback: `The approved work could not land on ${job.mainBranch}: merge conflict in ${landed.files.join(", ")}. Integrate the current ${job.mainBranch} and resolve the conflict.\n${landed.details}`,
      };
    }
    deps.mirrorFreshness?.lastSync.set(job.projectId, Date.now());
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
  if (job.action === "review" || !job.gitCommits) {
    return { kind: "ok", commits: { ...NO_COMMITS, branchHead: ctx.taskHead } };
  }

  if (transition?.kind === "submit" && ctx.violations.length === 0) {
    const message = transition.message.trim() || `Work on ${job.taskId}`;
    const sha = await worktree.commit({ message, trailers: trailers("review"), author: job.author });
    const head = sha ?? ctx.base;
    if (head !== ctx.taskHead) {
      const pushed = await pushBranch(mirror, {
        branch: job.taskBranch,
        sha: head,
        expectedOldSha: ctx.taskHead,
      });
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
  // checkpoint that is never merged (SPEC §3 rule 4, rule 10: nothing is rolled back).
  const message =
    transition?.kind === "escalate"
      ? `Checkpoint of ${job.taskId}: ${transition.reason}`
      : `Checkpoint of ${job.taskId} (${outcome.kind === "transition" ? transition?.kind : outcome.kind === "violation" ? outcome.violation : outcome.kind})`;
  const sha = await worktree.commit({ message, trailers: trailers("blocked"), author: job.author });
  if (sha === null) return { kind: "ok", commits: { ...NO_COMMITS, branchHead: ctx.taskHead } };
  const ref = checkpointRef(job.taskId, job.agentId);
  const pushed = await pushBranch(mirror, { branch: ref, sha, expectedOldSha: null });
  if (!pushed.ok)
    deps.logger.warn({ runId: job.runId, ref }, "checkpoint branch already existed; kept the existing one");
  return {
    kind: "ok",
    commits: { ...NO_COMMITS, checkpointRef: ref, commitSha: sha, branchHead: ctx.taskHead },
  };
}
