/**
 * spawner: the CPU of one git call, forked from this process vs through the process spawner
 * (packages/process, `OVERSEER_PROCESS_SPAWNER`), the Node one and the Perl one
 * (`OVERSEER_PROCESS_SPAWNER_PROGRAM`), with this process first grown to a worker's resident
 * size (a fork costs more the more memory is mapped). Counted, not timed:
 *
 *   caller     this process's own CPU (process.cpuUsage)
 *   children   the CPU of the children this process reaped (/proc/self/stat cutime + cstime):
 *              each git, including the time its fork of this process took before exec
 *   spawner    the spawner's own CPU and its reaped children's (/proc/<pid>/stat), where git's
 *              fork now happens (spawnerOwn: the spawner's own part)
 *
 * Same calls in both modes, one at a time: `git rev-parse HEAD` in a small repository.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { initBareRepo, runGit } from "@overseer/git";
import { processSpawnerPid, useProcessSpawner } from "@overseer/process";
import { REPO_ROOT } from "../support/service-process.ts";

/** direct: forked from this process; node, perl: through that spawner. */
type SpawnerMode = "direct" | "node" | "perl";

export interface SpawnerModeResult {
  mode: SpawnerMode;
  calls: number;
  /** CPU ms per git call, by whose it is. */
  perCallMs: { caller: number; children: number; spawner: number; spawnerOwn: number; total: number };
  callerRssMb: number;
  spawnerRssMb: number | null;
}

export interface SpawnerBenchResult {
  targetRssMb: number;
  modes: SpawnerModeResult[];
  /** total per call, the Node spawner's / direct. */
  ratio: number;
  /** total per call, the Perl spawner's / the Node spawner's. */
  perlToNode: number;
}

const TICK_MS = 10;

/** utime, stime, cutime, cstime of `pid` in ms (clock ticks of 10 ms). */
function cpuTimes(pid: number | "self"): { self: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  // Fields after the command: state is [0]; utime [11], stime [12], cutime [13], cstime [14].
  const at = (i: number) => fields[i] ?? 0;
  return { self: (at(11) + at(12)) * TICK_MS, children: (at(13) + at(14)) * TICK_MS };
}

function rssMb(pid: number | "self"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
  return Math.round(Number(line?.[1] ?? 0) / 1024);
}

/** Keeps `targetMb` of this process resident: small objects on the V8 heap, as a worker's are. */
function growTo(targetMb: number): unknown[] {
  const keep: unknown[] = [];
  while (rssMb("self") < targetMb) {
    keep.push(Array.from({ length: 50_000 }, (_, i) => ({ i, s: `entry ${i}` })));
  }
  return keep;
}

async function measure(mode: SpawnerMode, repo: string, calls: number): Promise<SpawnerModeResult> {
  useProcessSpawner(mode !== "direct", mode === "direct" ? "auto" : mode);
  for (let i = 0; i < 20; i++) await runGit(["rev-parse", "HEAD"], { cwd: repo });
  const spawner = mode !== "direct" ? (processSpawnerPid() ?? null) : null;
  const before = {
    caller: process.cpuUsage(),
    self: cpuTimes("self"),
    spawner: spawner && cpuTimes(spawner),
  };
  for (let i = 0; i < calls; i++) await runGit(["rev-parse", "HEAD"], { cwd: repo });
  const caller = process.cpuUsage(before.caller);
  const self = cpuTimes("self");
  const after = spawner ? cpuTimes(spawner) : null;
  const spawnerSelfMs = after && before.spawner ? after.self - before.spawner.self : 0;
  const spawnerChildrenMs = after && before.spawner ? after.children - before.spawner.children : 0;
  const spawnerMs = spawnerSelfMs + spawnerChildrenMs;
  const round = (ms: number) => Math.round((ms / calls) * 1000) / 1000;
  const callerMs = (caller.user + caller.system) / 1000;
  const childrenMs = self.children - before.self.children;
  return {
    mode,
    calls,
    perCallMs: {
      caller: round(callerMs),
      children: round(childrenMs),
      spawner: round(spawnerMs),
      spawnerOwn: round(spawnerSelfMs),
      total: round(callerMs + childrenMs + spawnerMs),
    },
    callerRssMb: rssMb("self"),
    spawnerRssMb: spawner ? rssMb(spawner) : null,
  };
}

/** The measurement itself, in this process (git-spawner-probe.ts runs it in a fresh one). */
export async function measureGitSpawner(options: {
  calls: number;
  rssMb: number;
}): Promise<SpawnerBenchResult> {
  const dir = await mkdtemp(path.join(tmpdir(), "overseer-spawner-bench-"));
  const repo = path.join(dir, "repo.git");
  const kept = growTo(options.rssMb);
  try {
    await initBareRepo(repo, { initialFiles: { "a.txt": "a\n" }, branch: "main" });
    const modes: SpawnerModeResult[] = [];
    // Interleaved, twice each, so that a change of the machine's load hits every mode alike.
    for (const mode of ["direct", "node", "perl", "perl", "node", "direct"] as const) {
      modes.push(await measure(mode, repo, options.calls));
    }
    const mean = (mode: string) => {
      const rows = modes.filter((m) => m.mode === mode);
      return rows.reduce((sum, m) => sum + m.perCallMs.total, 0) / rows.length;
    };
    return {
      targetRssMb: options.rssMb,
      modes,
      ratio: Math.round((mean("node") / mean("direct")) * 1000) / 1000,
      perlToNode: Math.round((mean("perl") / mean("node")) * 1000) / 1000,
    };
  } finally {
    useProcessSpawner(true, "auto");
    kept.length = 0;
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the measurement in a fresh Node process (through tsx), so that the caller's size is the
 * one asked for rather than the bench runner's (several hundred MB with every bench loaded).
 */
export async function benchGitSpawner(options: {
  calls: number;
  rssMb: number;
}): Promise<SpawnerBenchResult> {
  const probe = fileURLToPath(new URL("./git-spawner-probe.ts", import.meta.url));
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", probe, String(options.calls), String(options.rssMb)],
    { cwd: REPO_ROOT, maxBuffer: 1024 * 1024 },
  );
  return JSON.parse(stdout) as SpawnerBenchResult;
}
