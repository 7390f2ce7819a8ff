import { spawnGroup } from "@overseer/process";
import type { PreparedCommand } from "./sandbox-driver.ts";

/**
 * Reference implementation of the spawn/kill contract of `PreparedCommand`, used by `probe()`, the
 * benchmark and tests, and usable by callers that just need "run this, bounded". The harness
 * (which streams output and watches for transitions) follows the same steps with its own I/O.
 * It spawns as the harness does (@overseer/process `spawnGroup`: through the process spawner
 * unless `useProcessSpawner(false)`, with the prepared command's launch prelude when that
 * spawner applies it), so a probe or a test runs a sandbox the way a worker does.
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

/** Defaults of `runPreparedCommand`, defined once. */
export const RUN_PREPARED_DEFAULTS = Object.freeze({
  stdin: "" as string | Buffer,
  timeoutMs: 60_000,
  graceMs: 2_000,
  maxOutputBytes: 1024 * 1024,
  onSpawn: (_pid: number): void => undefined,
});

type ResolvedRunPreparedOptions = Readonly<Required<RunPreparedOptions>>;

/** Merges the options over `RUN_PREPARED_DEFAULTS` once and checks them (key, rule, value received). */
function resolveRunPreparedOptions(options: RunPreparedOptions): ResolvedRunPreparedOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const resolved: ResolvedRunPreparedOptions = { ...RUN_PREPARED_DEFAULTS, ...defined };
  for (const key of ["timeoutMs", "graceMs", "maxOutputBytes"] as const) {
    if (!Number.isInteger(resolved[key]) || resolved[key] < 0)
      throw new RangeError(`${key} must be an integer >= 0, received ${String(resolved[key])}`);
  }
  return resolved;
}

/** How long output may keep flowing after the spawned process exited. */
const OUTPUT_DRAIN_MS = 1_000;

/** Spawns `prepared` detached (own process group), waits for exit, stops it on timeout. No cleanup. */
export function runPreparedCommand(
  prepared: PreparedCommand,
  given: RunPreparedOptions = {},
): Promise<RunPreparedResult> {
  const options = resolveRunPreparedOptions(given);
  const { timeoutMs, maxOutputBytes: maxOutput } = options;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const { child } = spawnGroup(prepared.file, prepared.args, {
      cwd: prepared.cwd,
      env: { ...prepared.env },
      stdin: true,
      ...(prepared.preludeLaunch ? { preludeLaunch: prepared.preludeLaunch } : {}),
    });
    const stdin = child.stdin as NonNullable<typeof child.stdin>;
    if (child.pid !== undefined) options.onSpawn(child.pid);
    else child.once("spawn", () => options.onSpawn(child.pid as number));
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
    stdin.on("error", () => undefined); // EPIPE when the command ignores its stdin
    stdin.end(options.stdin);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void prepared.stop(child.pid, { graceMs: options.graceMs });
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
