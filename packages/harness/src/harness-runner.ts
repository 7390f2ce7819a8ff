import { type FSWatcher, statSync, watch } from "node:fs";
import { delimiter, resolve as resolvePath } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createLogger, type Logger } from "@overseer/config";
import { PROCESS_DEFAULTS } from "@overseer/process";
import type { ControlTransition } from "@overseer/queue";
import { execa } from "execa";
import { type ActivityWatcher, watchActivity } from "./activity-watcher.ts";
import { DEFAULT_CONTROL_MAX_BYTES, readControlDir } from "./control-dir-reader.ts";
import { resolveExecutable } from "./executable-resolver.ts";
import { HarnessNotConfiguredError } from "./harness-errors.ts";
import { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_OUTPUT_FLUSH_MS, OutputCollector } from "./output-collector.ts";
import { DEFAULT_KILL_WAIT_MS, terminateProcessGroup } from "./process-group-killer.ts";

/** Default time between SIGTERM and SIGKILL when a run's process group is ended: 5 s. */
export const DEFAULT_KILL_GRACE_MS = PROCESS_DEFAULTS.killGraceMs;
/** Default backup poll of the control dir, for filesystems without inotify: 1 s. */
export const DEFAULT_CONTROL_POLL_MS = 1000;
/** Default bound on waiting for stdout/stderr to close once the group is gone: 2 s. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 2000;
/** Default time a harness gets to exit by itself after its transition: 250 ms. */
export const DEFAULT_TRANSITION_LINGER_MS = 250;

/**
 * The harness argv wrapped for spawning (distinct from the sandbox package's `PreparedCommand`,
 * which a `WrapCommand` typically adapts), as produced by a sandbox driver: `file`/`args` start the sandbox,
 * which starts the harness argv inside; `cleanup` runs after the run (always).
 */
export interface WrappedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  cleanup?: () => Promise<void>;
  /**
   * The sandbox's own way to end the run: SIGTERM to the processes inside (the sandbox
   * itself is spared so they get their grace period), then SIGKILL of everything. Without
   * it the process group gets SIGTERM, grace, SIGKILL.
   */
  stop?: (pid: number, options: { graceMs: number }) => Promise<void>;
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

/**
 * Why the run ended: `exited` (by itself, without a transition), `transition` (a valid
 * transition was recorded: the group was ended for it, or the harness exited right after),
 * `timeout` / `stall` (hard timeout / idle watchdog), `aborted` (the caller's AbortSignal).
 */
export type HarnessEndReason = "exited" | "transition" | "timeout" | "stall" | "aborted";

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
}

let defaultLogger: Logger | undefined;

function sharedLogger(): Logger {
  defaultLogger ??= createLogger({ name: "harness" });
  return defaultLogger;
}

/** Wall-clock epoch milliseconds with the monotonic clock's sub-millisecond resolution. */
function epochNow(): number {
  return performance.timeOrigin + performance.now();
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
  const idleTimeoutMs = nonNegative("idleTimeoutMs", options.idleTimeoutMs ?? 0);
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
  if (options.signal?.aborted) throw new Error("run aborted before the harness was started");

  const prepared: WrappedCommand = options.wrap
    ? await options.wrap(options.argv, options.env)
    : { file, args: options.argv.slice(1), env: options.env };
  try {
    return await supervise(prepared, options, {
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

async function supervise(
  prepared: WrappedCommand,
  options: RunHarnessOptions,
  limits: Limits,
): Promise<HarnessRunResult> {
  const { logger } = limits;
  const subprocess = execa(prepared.file, prepared.args, {
    cwd: options.cwd,
    env: prepared.env,
    extendEnv: false,
    detached: true,
    cleanup: false,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    buffer: false,
    reject: false,
    stripFinalNewline: false,
  });
  const pid = subprocess.pid;
  if (pid === undefined) {
    const failed = await subprocess;
    const code = (failed as { code?: string }).code;
    if (code === "ENOENT" || code === "EACCES") {
      throw new HarnessNotConfiguredError(
        prepared.file,
        code === "ENOENT" ? "not_found" : "not_executable",
        code === "ENOENT" ? "no such file, or its interpreter is missing" : "permission denied",
      );
    }
    throw new Error(`cannot start harness "${prepared.file}": ${failed.message}`);
  }
  const spawnedAt = epochNow();
  logger.info({ pid, file: prepared.file, cwd: options.cwd }, "harness spawned");

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    subprocess.once("exit", (code, signal) => resolve({ code, signal }));
  });
  const settled = subprocess.then(
    () => undefined,
    () => undefined,
  );

  let lastActivity = performance.now();
  const collector = new OutputCollector({
    maxBytes: limits.maxOutputBytes,
    redact: options.redact,
    onOutput: options.onOutput
      ? (chunk) => {
          try {
            options.onOutput?.(chunk);
          } catch (error) {
            logger.warn({ pid, err: error }, "onOutput callback failed; output is still stored");
          }
        }
      : undefined,
    flushMs: limits.flushMs,
  });
  const stdout = subprocess.stdout;
  const stderr = subprocess.stderr;
  for (const stream of [stdout, stderr]) {
    const sink = collector.sink();
    stream.on("data", (chunk: Buffer) => {
      lastActivity = performance.now();
      sink(chunk);
    });
    stream.on("error", () => undefined);
  }
  const drained = Promise.all(
    [stdout, stderr].map(
      (stream) =>
        new Promise<void>((resolve) => {
          if (stream.destroyed || stream.readableEnded) resolve();
          else stream.once("close", () => resolve());
        }),
    ),
  );
  subprocess.stdin.on("error", () => undefined); // EPIPE when the harness never reads its prompt
  subprocess.stdin.end(options.prompt, "utf8");

  let onSpawnFailed = false;
  try {
    options.onSpawn?.(pid);
  } catch (error) {
    // The caller could not record the process (e.g. its pid for crash recovery): do not let
    // an unrecorded process run on. The run ends as aborted once supervision is set up.
    logger.error({ pid, err: error }, "onSpawn callback failed; ending the run");
    onSpawnFailed = true;
  }

  // --- ending the run -------------------------------------------------------------------
  // Mutable run state shared with the event handlers below.
  const state = {
    endReason: null as HarnessEndReason | null,
    termination: null as Promise<unknown> | null,
    transition: null as ControlTransition | null,
    transitionAt: null as number | null,
  };
  const endRun = (reason: HarnessEndReason) => {
    if (state.endReason !== null) return;
    state.endReason = reason;
    logger.info({ pid, reason }, "ending harness process group");
    const sandboxStop = prepared.stop;
    const stop = () =>
      sandboxStop
        ? sandboxStop(pid, { graceMs: limits.killGraceMs }).then(() => terminateProcessGroup(pid, 0))
        : terminateProcessGroup(pid, limits.killGraceMs);
    // After a transition the agent usually exits by itself within milliseconds (the shell
    // `overseer-agent` ends it); give it `transitionLingerMs` to do so before stopping the
    // group, which costs a /proc walk and a grace period. Leftovers are killed either way.
    // A harness that already exited needs no graceful stop either: only leftovers in its
    // group are killed (a sandbox's pid namespace died with it).
    const linger =
      reason === "exited"
        ? Promise.resolve(true)
        : reason === "transition" && limits.transitionLingerMs > 0
          ? Promise.race([exited.then(() => true), sleep(limits.transitionLingerMs).then(() => false)])
          : Promise.resolve(false);
    state.termination = linger
      .then((gone) => (gone ? terminateProcessGroup(pid, 0) : stop()))
      .then((outcome) => {
        if (outcome === "killed")
          logger.warn({ pid, reason }, "harness ignored SIGTERM; process group killed");
        if (outcome === "survived") logger.error({ pid, reason }, "harness process group survived SIGKILL");
        return outcome;
      });
  };

  // --- the control dir: event-driven, checks coalesced -----------------------------------
  let checking: Promise<void> | null = null;
  let recheck = false;
  const checkControl = (): Promise<void> => {
    if (state.transition) return Promise.resolve();
    if (checking) {
      recheck = true;
      return checking;
    }
    checking = (async () => {
      do {
        recheck = false;
        const read = await readControlDir(options.controlDir, { maxBytes: limits.controlMaxBytes });
        if (read.ok && !state.transition) {
          state.transition = read.transition;
          state.transitionAt = epochNow();
          logger.info({ pid, kind: read.transition.kind }, "transition recorded");
          endRun("transition");
        }
      } while (recheck && !state.transition);
    })().finally(() => {
      checking = null;
    });
    return checking;
  };
  let controlWatcher: FSWatcher | null = null;
  try {
    controlWatcher = watch(options.controlDir, { persistent: false }, () => void checkControl());
    controlWatcher.on("error", () => undefined);
  } catch {
    // No inotify here: the backup poll below still finds the transition.
  }
  const controlPoll = setInterval(() => void checkControl(), limits.controlPollMs);
  void checkControl();

  // --- deadlines: re-read the control dir first, a just-written transition wins ---------
  const deadline = (reason: "timeout" | "stall") => {
    void checkControl().then(() => {
      if (!state.transition) endRun(reason);
    });
  };
  const hardTimer = setTimeout(() => deadline("timeout"), limits.timeoutMs);
  let idleTimer: NodeJS.Timeout | null = null;
  let activityWatcher: ActivityWatcher | null = null;
  if (limits.idleTimeoutMs > 0) {
    if (options.watchPaths && options.watchPaths.length > 0) {
      activityWatcher = watchActivity({
        paths: options.watchPaths,
        onActivity: () => {
          lastActivity = performance.now();
        },
      });
    }
    const armIdle = (delay: number) => {
      idleTimer = setTimeout(() => {
        const idleFor = performance.now() - lastActivity;
        if (idleFor >= limits.idleTimeoutMs) deadline("stall");
        else armIdle(limits.idleTimeoutMs - idleFor);
      }, delay);
    };
    armIdle(limits.idleTimeoutMs);
  }
  const onAbort = () => endRun("aborted");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (onSpawnFailed || options.signal?.aborted) endRun("aborted");

  // --- wait for the end -------------------------------------------------------------------
  const exit = await exited;
  clearTimeout(hardTimer);
  if (idleTimer) clearTimeout(idleTimer);
  options.signal?.removeEventListener("abort", onAbort);
  if (state.endReason === null) endRun("exited");
  await state.termination;
  const endedAt = epochNow();

  const pipesClosed = await within(drained, limits.drainTimeoutMs);
  if (!pipesClosed) {
    // Something outside the group (a setsid escapee) still holds the pipes open.
    logger.warn({ pid }, "output pipes still open after the process group ended; closing them");
    stdout.destroy();
    stderr.destroy();
  }
  await within(settled, DEFAULT_KILL_WAIT_MS);
  collector.flush();

  activityWatcher?.close();
  controlWatcher?.close();
  clearInterval(controlPoll);
  while (checking) await checking;

  let controlError: string | null = null;
  if (!state.transition) {
    const read = await readControlDir(options.controlDir, { maxBytes: limits.controlMaxBytes });
    if (read.ok) {
      state.transition = read.transition;
      state.transitionAt = epochNow();
    } else if (read.code !== "no_file") {
      controlError = read.error;
    }
  }

  // A harness that records its transition and exits before the watcher reacts still ended
  // the run with that transition.
  const reason =
    state.endReason === "exited" && state.transition ? "transition" : (state.endReason ?? "exited");
  logger.info(
    { pid, reason, exitCode: exit.code, signal: exit.signal, transition: state.transition?.kind ?? null },
    "harness run ended",
  );
  return {
    exitCode: exit.code,
    signal: exit.signal,
    timedOut: reason === "timeout",
    stalled: reason === "stall",
    aborted: reason === "aborted",
    endReason: reason,
    transition: state.transition,
    controlError,
    output: collector.text(),
    outputTruncated: collector.truncated,
    durationMs: endedAt - spawnedAt,
    spawnedAt,
    endedAt,
    transitionAt: state.transitionAt,
  };
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

/** Waits for `promise` at most `ms`; true when it settled in time. Leaves no timer behind. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
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
