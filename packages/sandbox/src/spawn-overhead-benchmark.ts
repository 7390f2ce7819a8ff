import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PreparedCommand, SandboxDriver } from "./sandbox-driver.ts";
import type { SandboxSpec } from "./sandbox-spec-schema.ts";

/**
 * Measures what a driver adds to starting a process: `/bin/true` spawned plainly versus through
 * `driver.prepare` (same spawn method: detached, pipes). Reports the spawn-to-exit time and,
 * separately, the full per-run cost (prepare + spawn + cleanup: cgroup creation, runtime files).
 */

export interface SpawnOverheadOptions {
  driver: SandboxDriver;
  /** Measured iterations per series. Default 50. */
  iterations?: number;
  /** Unmeasured warm-up iterations per series. Default 3. */
  warmup?: number;
  /** Extra spec fields (limits, uid…) for the driver runs. */
  spec?: Partial<SandboxSpec>;
}

export interface SpawnOverheadResult {
  driver: string;
  iterations: number;
  /** Spawn → exit of `true` through the driver (prepared beforehand). */
  p50Ms: number;
  p99Ms: number;
  /** Spawn → exit of `true` without a sandbox. */
  plainP50Ms: number;
  plainP99Ms: number;
  /** prepare + spawn → exit + cleanup through the driver. */
  totalP50Ms: number;
  totalP99Ms: number;
  /** p50Ms - plainP50Ms. */
  overheadP50Ms: number;
}

/** Nearest-rank percentile of `samples` (0 < p ≤ 100). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

function timeSpawn(
  file: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, [...args], {
      cwd,
      env: { ...env },
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`${file} exited with ${code}: ${stderr.trim()}`));
    });
  });
}

const round = (value: number) => Math.round(value * 100) / 100;

export async function measureSpawnOverhead(options: SpawnOverheadOptions): Promise<SpawnOverheadResult> {
  const iterations = options.iterations ?? 50;
  const warmup = options.warmup ?? 3;
  const base = await mkdtemp(join(tmpdir(), "overseer-spawn-bench-"));
  try {
    const checkoutDir = join(base, "checkout");
    const controlDir = join(base, "control");
    await mkdir(checkoutDir);
    await mkdir(controlDir);
    const plain: number[] = [];
    const sandboxed: number[] = [];
    const total: number[] = [];
    for (let i = 0; i < warmup + iterations; i++) {
      const plainMs = await timeSpawn("/bin/true", [], { PATH: "/usr/bin:/bin" }, checkoutDir);
      const totalStarted = performance.now();
      const prepared: PreparedCommand = await options.driver.prepare(["/bin/true"], {
        ...options.spec,
        checkoutDir,
        controlDir,
        env: { PATH: "/usr/bin:/bin" },
      });
      let sandboxedMs: number;
      try {
        sandboxedMs = await timeSpawn(prepared.file, prepared.args, prepared.env, prepared.cwd);
      } finally {
        await prepared.cleanup();
      }
      const totalMs = performance.now() - totalStarted;
      if (i < warmup) continue;
      plain.push(plainMs);
      sandboxed.push(sandboxedMs);
      total.push(totalMs);
    }
    const p50 = percentile(sandboxed, 50);
    const plainP50 = percentile(plain, 50);
    return {
      driver: options.driver.name,
      iterations,
      p50Ms: round(p50),
      p99Ms: round(percentile(sandboxed, 99)),
      plainP50Ms: round(plainP50),
      plainP99Ms: round(percentile(plain, 99)),
      totalP50Ms: round(percentile(total, 50)),
      totalP99Ms: round(percentile(total, 99)),
      overheadP50Ms: round(p50 - plainP50),
    };
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}
