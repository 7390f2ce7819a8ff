import type { Readable, Writable } from "node:stream";
import { type PreludeLaunch, spawnGroup } from "@overseer/process";
import type { Logger } from "@overseer/runtime";
import { HarnessNotConfiguredError } from "./harness-errors.ts";

/** The spawned command: argv already wrapped by a sandbox, or the harness argv itself. */
export interface SpawnCommand {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Spawned instead of `file args` when the process spawner applies launch preludes (@overseer/process). */
  readonly preludeLaunch?: PreludeLaunch;
}

export interface HarnessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A harness process, right after spawning. */
export interface SpawnedHarness {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Its pid, which is also its process group id (it leads its own group). */
  readonly pid: number;
  /** Epoch ms (sub-ms precision) of the spawn. */
  readonly spawnedAt: number;
  /** Resolves when the process itself exited (its group may live on). */
  readonly exited: Promise<HarnessExit>;
  /** Resolves once the process exited and its stdio closed (never rejects). */
  readonly settled: Promise<void>;
}

/** Wall-clock epoch milliseconds with the monotonic clock's sub-millisecond resolution. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Phase 1 of a run: starts the command without a shell, in its own process group and session,
 * with exactly the given environment and piped stdio, at the run niceness. A command that
 * cannot be started (ENOENT, EACCES) is a {@link HarnessNotConfiguredError}.
 *
 * Through the process spawner, as git is (@overseer/process spawn-group.ts): a spawn forks the
 * caller, and from a busy worker's heap the harness's own spawn was the largest single item of
 * the worker's CPU profile (about 5 ms per run, against well under 1 ms for the frames that
 * relay its output).
 */
export async function spawnHarness(
  command: SpawnCommand,
  cwd: string,
  logger: Logger,
): Promise<SpawnedHarness> {
  const { child } = spawnGroup(command.file, command.args, {
    cwd,
    env: { ...command.env },
    stdin: true,
    ...(command.preludeLaunch ? { preludeLaunch: command.preludeLaunch } : {}),
  });
  // Listened to before anything else: an unheard 'error' event would end the worker, and
  // through the spawner the exit may arrive in the same read as the pid.
  const failed = new Promise<Error>((resolve) => child.once("error", resolve));
  const exited = new Promise<HarnessExit>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    // A spawner that died mid-run closes the call without an exit (its sandbox dies with it).
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  // Settled once it exited and its stdio closed (a failure after the start settles it too).
  const settled = new Promise<void>((resolve) => {
    child.once("close", () => resolve());
    void failed.then(() => resolve());
  });
  // Through the spawner the pid arrives with its answer; a direct spawn has it (or failed) at once.
  if (child.pid === undefined) {
    await Promise.race([new Promise<void>((resolve) => child.once("spawn", resolve)), failed]);
  }
  const pid = child.pid;
  if (pid === undefined) throw notStarted(command.file, await failed);
  const spawnedAt = epochNow();
  logger.info({ pid, file: command.file, cwd }, "harness spawned");
  const stdin = child.stdin as Writable;
  return { stdin, stdout: child.stdout, stderr: child.stderr, pid, spawnedAt, exited, settled };
}

/** Why a command could not be started: not there or not executable is "not configured". */
function notStarted(file: string, error: Error): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "EACCES") {
    return new HarnessNotConfiguredError(
      file,
      code === "ENOENT" ? "not_found" : "not_executable",
      code === "ENOENT" ? "no such file, or its interpreter is missing" : "permission denied",
    );
  }
  return new Error(`cannot start harness "${file}": ${error.message}`);
}
