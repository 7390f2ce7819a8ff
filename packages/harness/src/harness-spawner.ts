import type { Readable, Writable } from "node:stream";
import type { Logger } from "@overseer/runtime";
import { execa } from "execa";
import { HarnessNotConfiguredError } from "./harness-errors.ts";

/** The spawned command: argv already wrapped by a sandbox, or the harness argv itself. */
export interface SpawnCommand {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
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
  /** Resolves when execa settled the process (never rejects). */
  readonly settled: Promise<void>;
}

/** Wall-clock epoch milliseconds with the monotonic clock's sub-millisecond resolution. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Phase 1 of a run: starts the command without a shell, in its own process group (`detached`),
 * with exactly the given environment and piped stdio. A command that cannot be started
 * (ENOENT, EACCES) is a {@link HarnessNotConfiguredError}.
 */
export async function spawnHarness(
  command: SpawnCommand,
  cwd: string,
  logger: Logger,
): Promise<SpawnedHarness> {
  const subprocess = execa(command.file, [...command.args], {
    cwd,
    env: { ...command.env },
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
        command.file,
        code === "ENOENT" ? "not_found" : "not_executable",
        code === "ENOENT" ? "no such file, or its interpreter is missing" : "permission denied",
      );
    }
    throw new Error(`cannot start harness "${command.file}": ${failed.message}`);
  }
  const spawnedAt = epochNow();
  logger.info({ pid, file: command.file, cwd }, "harness spawned");
  const exited = new Promise<HarnessExit>((resolve) => {
    subprocess.once("exit", (code, signal) => resolve({ code, signal }));
  });
  const settled = subprocess.then(
    () => undefined,
    () => undefined,
  );
  const { stdin, stdout, stderr } = subprocess;
  return { stdin, stdout, stderr, pid, spawnedAt, exited, settled };
}
