import { statSync } from "node:fs";
import { delimiter, resolve as resolvePath } from "node:path";
import type { PreludeLaunch } from "@overseer/process";
import type { ControlTransition } from "@overseer/run-contract";
import { createLogger, type Logger } from "@overseer/runtime";
import { DEFAULT_CONTROL_MAX_BYTES, readControlDir } from "./control-dir-reader.ts";
import { ControlWatcher } from "./control-watcher.ts";
import { resolveExecutable } from "./executable-resolver.ts";
import { HARNESS_DEFAULTS } from "./harness-defaults.ts";
import { HarnessAbortedError, HarnessNotConfiguredError } from "./harness-errors.ts";
import { epochNow, spawnHarness } from "./harness-spawner.ts";
import { connectStdio, within } from "./harness-stdio.ts";
import { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_OUTPUT_FLUSH_MS } from "./output-collector.ts";
import { DEFAULT_KILL_WAIT_MS } from "./process-group-killer.ts";
import { armDeadlines } from "./run-deadlines.ts";
import { type HarnessEndReason, RunEnder } from "./run-ender.ts";

/** Default time between SIGTERM and SIGKILL when a run's process group is ended: 5 s. */
export const DEFAULT_KILL_GRACE_MS = HARNESS_DEFAULTS.killGraceMs;
/** Default backup poll of the control dir, for filesystems without inotify: 1 s. */
export const DEFAULT_CONTROL_POLL_MS = HARNESS_DEFAULTS.controlPollMs;
/** Default bound on waiting for stdout/stderr to close once the group is gone: 2 s. */
export const DEFAULT_DRAIN_TIMEOUT_MS = HARNESS_DEFAULTS.drainTimeoutMs;
/** Default time a harness gets to exit by itself after its transition: 250 ms. */
export const DEFAULT_TRANSITION_LINGER_MS = HARNESS_DEFAULTS.transitionLingerMs;

/**
 * The harness argv wrapped for spawning (distinct from the sandbox package's `PreparedCommand`,
 * which a `WrapCommand` typically adapts), as produced by a sandbox driver: `file`/`args` start the sandbox,
 * which starts the harness argv inside; `cleanup` runs after the run (always).
 */
export interface WrappedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** The same command without the sandbox's host launcher, for a spawner that takes its steps itself (`PreparedCommand.preludeLaunch`). */
  preludeLaunch?: PreludeLaunch;
  cleanup?: () => Promise<void>;
  /**
   * The sandbox's own way to end the run: SIGTERM to the processes inside (the sandbox
   * itself is spared so they get their grace period), then SIGKILL of everything. Without
   * it the process group gets SIGTERM, grace, SIGKILL.
   */
  stop?: (pid: number, options: { graceMs: number }) => Promise<void>;
  /** The sandbox limits the run ran into (read after it ended, before `cleanup`). */
  limitsReached?: () => Promise<string[]>;
}

/** Turns the harness argv + env into the command that runs it inside a sandbox. */
export type WrapCommand = (
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
) => Promise<WrappedCommand>;

export interface RunHarnessOptions {
  /** Harness command, placeholders already expanded ({@link expandArgv}). */
  argv: string[];
  /** Working directory: the run's checkout. */
  cwd: string;
  /** The complete environment ({@link buildHarnessEnv}); nothing is inherited from the worker. */
  env: Record<string, string>;
  /** Written to the harness's stdin as UTF-8, then stdin is closed. */
  prompt: string;
  /** The run's private control dir; must exist and hold no transition yet. */
  controlDir: string;
  /** Hard limit on the run (`timeout_seconds`); the group is killed when it passes. */
  timeoutMs: number;
  /** No output and no file change for this long is a stall (`idle_timeout_seconds`). 0 = off. Default 0. */
  idleTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL when the group is ended. Default {@link DEFAULT_KILL_GRACE_MS} (5 s). */
  killGraceMs?: number;
  /** Directory trees whose file changes count as activity for the idle watchdog (usually the checkout). */
  watchPaths?: string[];
  /** Bytes of output kept (the last ones). Default {@link DEFAULT_MAX_OUTPUT_BYTES} (1 MiB). */
  maxOutputBytes?: number;
  /** Live output, already redacted, stdout and stderr interleaved, uncapped. */
  onOutput?: (chunk: string) => void;
  /**
   * A line of output (redacted) on which the run is ended at once: the CLI keeps retrying what
   * no retry fixes (Claude Code's refused key). The run then ends with `endReason` "fatal_output".
   */
  endOnOutput?: (line: string) => boolean;
  /** Applied to all output before it is stored or streamed. */
  redact: (text: string) => string;
  /** Sandbox hook; without it the harness runs directly (no isolation). */
  wrap?: WrapCommand;
  /** Called with the pid (= process group id) right after spawning. */
  onSpawn?: (pid: number) => void;
  /**
   * Check before spawning that argv[0] resolves to an executable on the env's PATH, and fail
   * with {@link HarnessNotConfiguredError} otherwise. Default true without `wrap`, false with
   * it (the sandbox may see a different filesystem; its own spawn error is still typed).
   */
  checkExecutable?: boolean;
  /** Largest control file accepted. Default {@link DEFAULT_CONTROL_MAX_BYTES} (256 KiB). */
  controlMaxBytes?: number;
  /** Backup poll of the control dir besides fs.watch. Default {@link DEFAULT_CONTROL_POLL_MS} (1 s). */
  controlPollMs?: number;
  /** Delay before a partial output line is flushed. Default {@link DEFAULT_OUTPUT_FLUSH_MS} (100 ms). */
  outputFlushMs?: number;
  /** Bound on waiting for the output pipes to close after the group ended. Default {@link DEFAULT_DRAIN_TIMEOUT_MS} (2 s). */
  drainTimeoutMs?: number;
  /**
   * After a valid transition, how long the harness may take to exit by itself before its
   * process group is stopped. Default {@link DEFAULT_TRANSITION_LINGER_MS} (250 ms).
   */
  transitionLingerMs?: number;
  /** Aborting ends the run's process group (worker shutdown). */
  signal?: AbortSignal;
  /** Default: a logger named `harness`. */
  logger?: Logger;
}

export type { HarnessEndReason } from "./run-ender.ts";

export interface HarnessRunResult {
  /** Exit code of the harness (or sandbox) process; null when it died by a signal. */
  exitCode: number | null;
  signal: string | null;
  /** The hard timeout ended the run. */
  timedOut: boolean;
  /** The idle watchdog ended the run. */
  stalled: boolean;
  /** The caller's AbortSignal ended the run. */
  aborted: boolean;
  endReason: HarnessEndReason;
  /** The valid transition the agent recorded, if any. */
  transition: ControlTransition | null;
  /** Why the control dir's content was refused (malformed, duplicate, symlink…); null when fine or empty. */
  controlError: string | null;
  /** Redacted output, the last `maxOutputBytes` bytes, after a truncation marker when cut. */
  output: string;
  outputTruncated: boolean;
  durationMs: number;
  /** Epoch ms (sub-ms precision) when the process was spawned. */
  spawnedAt: number;
  /** Epoch ms when the process group was gone. */
  endedAt: number;
  /** Epoch ms when the worker saw the valid transition; null without one. */
  transitionAt: number | null;
  /** Sandbox limits the run ran into (`pids_max 64 reached: 212 forks refused`); absent when none. */
  limitsReached?: string[];
}

let defaultLogger: Logger | undefined;

function sharedLogger(): Logger {
  defaultLogger ??= createLogger({ name: "harness" });
  return defaultLogger;
}

/**
 * Runs one harness process for one run and reports how it ended.
 *
 * Lifecycle: spawn (no shell, own process group via `detached`, prompt on stdin) → running →
 * one of: the process exits by itself; a valid transition appears in the control dir; the
 * hard timeout passes; the idle watchdog fires; the caller aborts. Every ending except a
 * natural exit ends the whole process group at once (SIGTERM, `killGraceMs`, SIGKILL); after
 * a natural exit any members left behind in the group are ended the same way, so no run
 * leaves processes behind in its group. A transition is terminal: the agent has said it is
 * done, so the group is ended even if the harness wanted to go on.
 *
 * Before a timeout or stall is declared the control dir is read once more, so a transition
 * written just before the deadline wins over the deadline. The control dir is watched with
 * fs.watch (inotify) plus a slow backup poll; a file that is present but invalid does not end
 * the run (the agent may still exit or be timed out) and is reported as `controlError`.
 *
 * Throws {@link HarnessNotConfiguredError} when the command cannot be started (ENOENT/EACCES).
 */
export async function runHarness(options: RunHarnessOptions): Promise<HarnessRunResult> {
  const killGraceMs = nonNegative("killGraceMs", options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
  const timeoutMs = positive("timeoutMs", options.timeoutMs);
  const idleTimeoutMs = nonNegative("idleTimeoutMs", options.idleTimeoutMs ?? HARNESS_DEFAULTS.idleTimeoutMs);
  const maxOutputBytes = positive("maxOutputBytes", options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  const controlMaxBytes = positive("controlMaxBytes", options.controlMaxBytes ?? DEFAULT_CONTROL_MAX_BYTES);
  const controlPollMs = positive("controlPollMs", options.controlPollMs ?? DEFAULT_CONTROL_POLL_MS);
  const drainTimeoutMs = nonNegative("drainTimeoutMs", options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS);
  const flushMs = nonNegative("outputFlushMs", options.outputFlushMs ?? DEFAULT_OUTPUT_FLUSH_MS);
  const transitionLingerMs = nonNegative(
    "transitionLingerMs",
    options.transitionLingerMs ?? DEFAULT_TRANSITION_LINGER_MS,
  );
  const logger = options.logger ?? sharedLogger();

  const file = options.argv[0];
  if (file === undefined || file.length === 0) throw new HarnessNotConfiguredError("", "empty_argv");
  if (!isDirectory(options.cwd))
    throw new Error(`run checkout ${options.cwd} does not exist or is not a directory`);
  if (options.checkExecutable ?? options.wrap === undefined) {
    preflightExecutable(file, options.env.PATH, options.cwd);
  }
  const before = await readControlDir(options.controlDir, { maxBytes: controlMaxBytes });
  if (before.ok || before.code !== "no_file") {
    throw new Error(
      `control dir ${options.controlDir} must exist and be empty before a run (${before.ok ? "it already holds a transition" : before.error}); give every run a fresh control dir`,
    );
  }
  if (options.signal?.aborted) throw new HarnessAbortedError();

  const prepared: WrappedCommand = options.wrap
    ? await options.wrap(options.argv, options.env)
    : { file, args: options.argv.slice(1), env: options.env };
  try {
    const result = await supervise(prepared, options, {
      killGraceMs,
      timeoutMs,
      idleTimeoutMs,
      maxOutputBytes,
      controlMaxBytes,
      controlPollMs,
      drainTimeoutMs,
      flushMs,
      transitionLingerMs,
      logger,
    });
    const reached = (await prepared.limitsReached?.().catch(() => [])) ?? [];
    return reached.length > 0 ? { ...result, limitsReached: reached } : result;
  } finally {
    await prepared.cleanup?.();
  }
}

interface Limits {
  killGraceMs: number;
  timeoutMs: number;
  idleTimeoutMs: number;
  maxOutputBytes: number;
  controlMaxBytes: number;
  controlPollMs: number;
  drainTimeoutMs: number;
  flushMs: number;
  transitionLingerMs: number;
  logger: Logger;
}

/**
 * One run, phase by phase (each phase is its own module with its own tests):
 *   spawnHarness → connectStdio → RunEnder + ControlWatcher + armDeadlines → wait for the exit
 *   → end the group → drain the pipes → last control read → the result.
 */
async function supervise(
  prepared: WrappedCommand,
  options: RunHarnessOptions,
  limits: Limits,
): Promise<HarnessRunResult> {
  const { logger } = limits;
  const spawned = await spawnHarness(prepared, options.cwd, logger);
  const { pid } = spawned;
  let ender: RunEnder | null = null;
  const stdio = connectStdio(spawned, {
    prompt: options.prompt,
    maxOutputBytes: limits.maxOutputBytes,
    redact: options.redact,
    onOutput: withLineWatch(options.onOutput, options.endOnOutput, () => ender?.end("fatal_output")),
    flushMs: limits.flushMs,
    logger,
  });
  const onSpawnFailed = !notifySpawn(options, pid, logger);
  ender = new RunEnder({
    pid,
    exited: spawned.exited,
    stop: prepared.stop,
    killGraceMs: limits.killGraceMs,
    transitionLingerMs: limits.transitionLingerMs,
    logger,
  });
  const control = new ControlWatcher({
    controlDir: options.controlDir,
    maxBytes: limits.controlMaxBytes,
    pollMs: limits.controlPollMs,
    onTransition: (transition) => {
      logger.info({ pid, kind: transition.kind }, "transition recorded");
      ender.end("transition");
    },
  });
  control.start();
  const deadlines = armDeadlines({
    timeoutMs: limits.timeoutMs,
    idleTimeoutMs: limits.idleTimeoutMs,
    watchPaths: options.watchPaths,
    lastOutputAt: stdio.lastOutputAt,
    signal: options.signal,
    // A transition written just before the deadline wins over it.
    onDeadline: (reason) =>
      void control.check().then(() => {
        if (!control.transition) ender.end(reason);
      }),
    onAbort: () => ender.end("aborted"),
  });
  if (onSpawnFailed) ender.end("aborted");

  const exit = await spawned.exited;
  deadlines.disarm();
  ender.end("exited");
  await ender.ended();
  const endedAt = epochNow();
  await stdio.drain(limits.drainTimeoutMs);
  await within(spawned.settled, DEFAULT_KILL_WAIT_MS);
  stdio.collector.flush();
  const controlError = await control.close();

  // A harness that records its transition and exits before the watcher reacts still ended
  // the run with that transition.
  const transition = control.transition;
  const reason = ender.reason === "exited" && transition ? "transition" : (ender.reason ?? "exited");
  logger.info(
    { pid, reason, exitCode: exit.code, signal: exit.signal, transition: transition?.kind ?? null },
    "harness run ended",
  );
  return {
    exitCode: exit.code,
    signal: exit.signal,
    timedOut: reason === "timeout",
    stalled: reason === "stall",
    aborted: reason === "aborted",
    endReason: reason,
    transition,
    controlError,
    output: stdio.collector.text(),
    outputTruncated: stdio.collector.truncated,
    durationMs: endedAt - spawned.spawnedAt,
    spawnedAt: spawned.spawnedAt,
    endedAt,
    transitionAt: control.transitionAt,
  };
}

/** The live output callback, plus `endOnOutput` looked at line by line (chunks may split lines). */
function withLineWatch(
  onOutput: ((chunk: string) => void) | undefined,
  endOnOutput: ((line: string) => boolean) | undefined,
  end: () => void,
): ((chunk: string) => void) | undefined {
  if (!endOnOutput) return onOutput;
  let carry = "";
  return (chunk) => {
    onOutput?.(chunk);
    const lines = (carry + chunk).split("\n");
    carry = (lines.pop() ?? "").slice(-64 * 1024);
    if (lines.some((line) => endOnOutput(line))) end();
  };
}

/**
 * Tells the caller the pid. False when its callback failed: the caller could not record the
 * process (e.g. its pid for crash recovery), so an unrecorded process must not run on.
 */
function notifySpawn(options: RunHarnessOptions, pid: number, logger: Logger): boolean {
  try {
    options.onSpawn?.(pid);
    return true;
  } catch (error) {
    logger.error({ pid, err: error }, "onSpawn callback failed; ending the run");
    return false;
  }
}

function preflightExecutable(file: string, path: string | undefined, cwd: string): void {
  if (resolveExecutable(file, path, cwd) !== null) return;
  // Tell "exists but is not executable" apart from "not there at all".
  const candidates = file.includes("/")
    ? [resolvePath(cwd, file)]
    : (path ?? "").split(delimiter).map((dir) => resolvePath(cwd, dir || ".", file));
  const present = candidates.find((candidate) => {
    try {
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
  if (present)
    throw new HarnessNotConfiguredError(file, "not_executable", `${present} lacks execute permission`);
  throw new HarnessNotConfiguredError(
    file,
    "not_found",
    file.includes("/") ? "no such file" : `not on the run's PATH ${path ?? "(unset)"}`,
  );
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be greater than 0, received ${value}`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0)
    throw new RangeError(`${name} must be 0 or more, received ${value}`);
  return value;
}
