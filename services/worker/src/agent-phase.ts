import {
  buildHarnessEnv,
  cliRetryWatch,
  expandArgv,
  HarnessAbortedError,
  HarnessNotConfiguredError,
  type HarnessRunResult,
  resolveExecutable,
  runHarness,
  type WrapCommand,
} from "@overseer/harness";
import type { RunJob, RunOutcome } from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";
import { SandboxSpecError } from "@overseer/sandbox";
import { type DiskGuard, startDiskGuard } from "./disk-guard.ts";
import { type HookResult, runHook } from "./hook-runner.ts";
import {
  type Observed,
  type PhaseClock,
  type RunExecutorDeps,
  type RunPaths,
  WorkerShutdownError,
} from "./run-context.ts";
import type { RunTranscriptRecorder } from "./transcript-recorder.ts";
import type { RunUsageTracker } from "./usage-tracker.ts";

export type AgentPhase =
  /** The agent ran to its end (with or without a transition). */
  | { kind: "finished"; harness: HarnessRunResult; observed: Observed }
  /** The run ended before a transition could count: a hook failed, the disk limit, no harness. */
  | { kind: "ended"; outcome: RunOutcome; observed: Observed };

export interface AgentPhaseContext {
  redact: (text: string) => string;
  log: Logger;
  clock: PhaseClock;
  /** Aborted on worker shutdown or operator cancel. */
  signal?: AbortSignal | undefined;
  /** Counts the agent's usage as its output streams. */
  usage?: RunUsageTracker | undefined;
  /** Parses the agent's output into its transcript as it streams. */
  transcript?: RunTranscriptRecorder | undefined;
  /** The `.overseer/environment.yml` setup commands (argv each), run before the setup hook. */
  setup?: { commands: readonly string[][]; timeoutMs: number } | undefined;
}

/**
 * Phase 2: everything that runs inside the sandbox — the setup hook, the agent with the prompt
 * on stdin, the after_run hook — while a disk guard measures what the run adds to its checkout
 * and control dir (apparent bytes and files). Crossing a limit ends the process group at once and the run as a
 * `disk_limit` violation (nothing of it is committed: the flood would land in the mirror).
 * Throws WorkerShutdownError when `signal` aborts the agent.
 */
export async function runAgent(
  job: RunJob,
  deps: RunExecutorDeps,
  paths: RunPaths,
  ctx: AgentPhaseContext,
): Promise<AgentPhase> {
  const stop = new AbortController();
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, stop.signal]) : stop.signal;
  const guard = await startDiskGuard({
    paths: [paths.checkout, paths.controlDir],
    limitBytes: paths.diskLimitBytes,
    maxFiles: deps.maxFiles,
    intervalMs: deps.diskCheckMs,
    onExceeded: (usage) => {
      ctx.log.warn(usage, "run exceeded its disk limit; ending its process group");
      stop.abort();
    },
  });
  try {
    let phase: Awaited<ReturnType<typeof runInSandbox>>;
    try {
      phase = await runInSandbox(job, deps, paths, { ...ctx, signal });
    } catch (error) {
      // The project's sandbox policy cannot be built: no retry can fix that.
      if (error instanceof SandboxSpecError) return invalidSandboxSpec(job.projectId, error);
      throw error;
    }
    await guard.stop();
    if (guard.exceeded) return diskLimitReached(guard, phase.observed);
    if (phase.kind === "aborted") throw new WorkerShutdownError(job.runId);
    return phase;
  } finally {
    await guard.stop();
  }
}

function invalidSandboxSpec(projectId: string, error: SandboxSpecError): AgentPhase {
  return {
    kind: "ended",
    outcome: {
      kind: "misconfigured",
      reason: "configuration_error",
      message: `The project's sandbox cannot be built: ${error.message}. Fix: correct sandbox.* (read_only_paths, limits) or network_allow_hosts in the runner config, then \`overseer init --project ${projectId} --update --config runner.json\`.`,
    },
    observed: {},
  };
}

function diskLimitReached(guard: DiskGuard, observed: Observed): AgentPhase {
  const mib = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);
  const breach = guard.exceeded;
  const what =
    breach?.over === "files"
      ? `added ${breach.addedFiles} files and directories to its checkout, over its limit of ${breach.maxFiles} new files`
      : `wrote ${mib(breach?.addedBytes ?? 0)} MiB (apparent size: sparse files count in full) into its checkout, over its disk limit of ${mib(breach?.limitBytes ?? 0)} MiB`;
  return {
    kind: "ended",
    outcome: {
      kind: "violation",
      violation: "disk_limit",
      detail: `the run ${what}; its process group was ended and nothing of it was committed`,
    },
    observed,
  };
}

async function runInSandbox(
  job: RunJob,
  deps: RunExecutorDeps,
  paths: RunPaths,
  ctx: AgentPhaseContext,
): Promise<AgentPhase | { kind: "aborted"; observed: Observed }> {
  const wrap = await deps.sandboxFor(job, paths);
  const env = runEnv(job, paths);
  const hook = hookRunner(deps, paths, env, wrap, ctx);
  ctx.clock.lap("sandbox");

  // Aborted (a cancel, a shutdown) before or while the setup hook ran: nothing of the run counts.
  if (ctx.signal?.aborted) return { kind: "aborted", observed: {} };
  const commands = ctx.setup?.commands ?? [];
  for (const [index, command] of commands.entries()) {
    const step = await hook({ argv: [...command], timeoutMs: ctx.setup?.timeoutMs ?? 600_000 });
    if (ctx.signal?.aborted) return { kind: "aborted", observed: { output: step.output } };
    if (!step.ok) return environmentSetupFailed(index, command, step);
  }
  if (commands.length > 0) ctx.clock.lap("environment_setup");
  if (job.hooks.setup) {
    const setup = await hook(job.hooks.setup);
    ctx.clock.lap("setup_hook");
    if (ctx.signal?.aborted) return { kind: "aborted", observed: { output: setup.output } };
    if (!setup.ok) return hookFailed("setup", setup, { output: setup.output });
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
    return notConfigured(
      new HarnessNotConfiguredError(argv[0] as string, "not_found", `PATH=${env.PATH ?? ""}`).message,
    );
  }
  let harness: HarnessRunResult;
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
      onOutput: (chunk) => {
        ctx.usage?.write(chunk);
        ctx.transcript?.write(chunk);
        deps.onOutput?.(job, chunk);
      },
      // A refused key the CLI would retry for minutes ends the run on its first retry; a rate
      // limit or an unreachable gateway after OVERSEER_CLI_RETRY_LIMIT retries in a row.
      endOnOutput: cliRetryWatch(deps.cliRetryLimit),
      redact: ctx.redact,
      wrap,
      checkExecutable: wrap === undefined,
      signal: ctx.signal,
      logger: ctx.log,
    });
  } catch (error) {
    if (error instanceof HarnessNotConfiguredError) return notConfigured(error.message);
    if (error instanceof HarnessAbortedError) return { kind: "aborted", observed: {} };
    throw error;
  }
  ctx.clock.lap("agent");
  const observed: Observed = {
    exitCode: harness.exitCode,
    signal: harness.signal,
    durationMs: harness.durationMs,
    output: harness.output,
    outputTruncated: harness.outputTruncated,
    spawnedAt: harness.spawnedAt,
    exitedAt: harness.transitionAt ?? harness.endedAt,
  };
  if (harness.aborted) return { kind: "aborted", observed };

  if (job.hooks.afterRun) {
    const after = await hook(job.hooks.afterRun);
    ctx.clock.lap("after_run_hook");
    if (ctx.signal?.aborted) return { kind: "aborted", observed };
    if (!after.ok)
      return hookFailed("after_run", after, { ...observed, output: `${harness.output}\n${after.output}` });
  }
  return { kind: "finished", harness, observed };
}

function hookFailed(which: "setup" | "after_run", hook: HookResult, observed: Observed): AgentPhase {
  const how = hook.timedOut ? "timed out" : `exit ${hook.exitCode ?? "by signal"}`;
  return {
    kind: "ended",
    outcome: {
      kind: "no-transition",
      crashed: false,
      detail: `${which} hook failed (${how}):\n${hook.output}`,
    },
    observed,
  };
}

function environmentSetupFailed(index: number, command: readonly string[], hook: HookResult): AgentPhase {
  const how = hook.timedOut ? "timed out (setup_timeout_seconds)" : `exit ${hook.exitCode ?? "by signal"}`;
  const shown = command[0] === "/bin/sh" && command[1] === "-c" ? command[2] : JSON.stringify(command);
  return {
    kind: "ended",
    outcome: {
      kind: "no-transition",
      crashed: false,
      detail: `.overseer/environment.yml setup[${index}] failed (${how}): ${shown}\n${hook.output}`,
    },
    observed: { output: hook.output },
  };
}

function notConfigured(message: string): AgentPhase {
  return {
    kind: "ended",
    outcome: { kind: "misconfigured", reason: "harness_not_configured", message },
    observed: {},
  };
}

/** The environment of everything a run starts in its sandbox: the agent and the hooks. */
export function runEnv(job: RunJob, paths: RunPaths): Record<string, string> {
  return buildHarnessEnv({
    base: baseEnv(job),
    projectRoot: paths.checkout,
    taskId: job.taskId,
    role: job.role,
    agentId: job.agentId,
    action: job.action,
    promptFile: paths.promptFile,
    controlDir: paths.controlDir,
    pathPrepend: [paths.agentBinDir, ...(paths.agentCli ? [paths.agentCli.binDir] : [])],
  });
}

/** Runs one hook-shaped command (`{argv, timeoutMs}`) in the run's sandbox and checkout. */
export function hookRunner(
  deps: Pick<RunExecutorDeps, "killGraceMs">,
  paths: RunPaths,
  env: Record<string, string>,
  wrap: WrapCommand | undefined,
  ctx: { redact: (text: string) => string; signal?: AbortSignal | undefined },
): (spec: { argv: string[]; timeoutMs: number }) => Promise<HookResult> {
  return (spec) =>
    runHook({
      cwd: paths.checkout,
      env,
      killGraceMs: deps.killGraceMs,
      redact: ctx.redact,
      wrap,
      maxOutputBytes: 64 * 1024,
      signal: ctx.signal,
      argv: spec.argv,
      timeoutMs: spec.timeoutMs,
    });
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
