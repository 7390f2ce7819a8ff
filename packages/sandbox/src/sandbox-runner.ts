import { spawn } from "node:child_process";
import type { PreparedCommand } from "./sandbox-driver.ts";

/**
 * Reference implementation of the spawn/kill contract of `PreparedCommand`, used by `probe()`, the
 * benchmark and tests, and usable by callers that just need "run this, bounded". The harness
 * (which streams output and watches for transitions) follows the same steps with its own I/O.
 */

export interface RunPreparedOptions {
  /** Written to the command's stdin, which is then closed. Default: empty stdin. */
  stdin?: string | Buffer;
  /** Wall-clock bound; on expiry `prepared.stop()` runs. Default 60 000 ms. */
  timeoutMs?: number;
  /** SIGTERM→SIGKILL grace when stopping. Default 2000 ms. */
  graceMs?: number;
  /** Bytes kept per output stream (the rest is counted, not kept). Default 1 MiB. */
  maxOutputBytes?: number;
  /** Called right after spawn with the child's pid (= the process-group id). */
  onSpawn?: (pid: number) => void;
}

export interface RunPreparedResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

/** How long output may keep flowing after the spawned process exited. */
const OUTPUT_DRAIN_MS = 1_000;

/** Spawns `prepared` detached (own process group), waits for exit, stops it on timeout. No cleanup. */
export function runPreparedCommand(
  prepared: PreparedCommand,
  options: RunPreparedOptions = {},
): Promise<RunPreparedResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxOutput = options.maxOutputBytes ?? 1024 * 1024;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(prepared.file, [...prepared.args], {
      cwd: prepared.cwd,
      env: { ...prepared.env },
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const collect = (sink: Buffer[]) => {
      let kept = 0;
      return (chunk: Buffer) => {
        if (kept >= maxOutput) return;
        sink.push(chunk.subarray(0, maxOutput - kept));
        kept += chunk.length;
      };
    };
    child.stdout.on("data", collect(stdout));
    child.stderr.on("data", collect(stderr));
    child.stdin.on("error", () => undefined); // EPIPE when the command ignores its stdin
    child.stdin.end(options.stdin ?? "");
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void prepared.stop(child.pid, { graceMs: options.graceMs ?? 2_000 });
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    let settled = false;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        exitCode,
        signal,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        timedOut,
        durationMs: performance.now() - started,
      });
    };
    child.once("close", finish);
    child.once("exit", (exitCode, signal) => {
      // A process that escaped the group (possible only without a pid namespace, i.e. driver
      // "none") may hold the pipes open forever: give output a bounded drain, then stop waiting.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(exitCode, signal);
      }, OUTPUT_DRAIN_MS).unref();
    });
  });
}
