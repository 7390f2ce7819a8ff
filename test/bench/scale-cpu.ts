/**
 * Where the machine's CPU goes in a phase of the scale bench: the whole machine's busy time
 * (/proc/stat) beside each part of the cluster (/proc/<pid>/stat), so that CPU per task can be
 * split into coordinator, workers (their own and their children's: git, bwrap, the harness),
 * Postgres (the postmaster and its backends), Redis, the gateway, the bench itself (its progress
 * reads, and its probe's client in a process of its own) and the rest (the kernel, other
 * processes).
 *
 * A process's children count once they are reaped (cutime + cstime); a Postgres backend that
 * lives through the phase counts by its own time, one that ends in it by the postmaster's
 * children's time. A worker's process spawner (named `overseer-spawner`, packages/process) lives
 * as long as its worker: it counts by its own time and its reaped children's (the git processes
 * it started for the worker), as `workersSpawner`.
 *
 * What no part accounts for is split where the kernel says whose it is: `kernelIrq`, the interrupt
 * and softirq time of /proc/stat (the loopback TCP between the services is received in softirq,
 * charged to no process), and `kernelThreads`, the kernel's own threads (children of kthreadd,
 * pid 2: kworkers flushing the file systems, rcu, ksoftirqd; visible when the bench runs on a VM
 * rather than in a container). `workersSandboxes` is what the workers started that none of those
 * counts hold (the sandboxes' init and agents, ended with the run's process group, no parent
 * reaping them), where the bench can count a worker's whole tree (scale-accounting.ts). `other` is
 * the rest: processes outside the cluster, and, without that count, the sandboxes.
 */
import { readdir, readFile } from "node:fs/promises";

/** ms of CPU per part, and the machine's busy ms, over the same interval. */
export interface CpuTotals {
  machineMs: number;
  parts: Record<string, number>;
}

/** The processes a sample reads. */
export interface CpuParts {
  coordinatorPid: number | undefined;
  workerPids: readonly (number | undefined)[];
  postmasterPid: number | undefined;
  redisPid: number | undefined;
  gatewayPid: number | undefined;
  /** The gateway probe's client (scale-gateway-client.ts): counted as the bench's. */
  probeClientPid: number | undefined;
  /**
   * The workers and everything they started, ended processes included (scale-accounting.ts), or
   * null where it cannot be counted.
   */
  workersTreeMs: (() => number) | null;
}

/** Clock ticks (USER_HZ, 100 on Linux) in ms. */
const TICK_MS = 10;

interface ProcStat {
  comm: string;
  ppid: number;
  own: number;
  children: number;
}

async function procStat(pid: number | string): Promise<ProcStat | null> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  if (stat === "") return null;
  // Fields after the command name (which may hold spaces) start at field 3 (state).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = (i: number) => Number(fields[i]) * TICK_MS;
  const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
  return { comm, ppid: Number(fields[1]), own: ticks(11) + ticks(12), children: ticks(13) + ticks(14) };
}

/**
 * The machine's busy time so far (user, nice, system, irq, softirq and steal of /proc/stat) and
 * the part of it spent in interrupts and softirqs.
 */
async function machineBusyMs(): Promise<{ busy: number; irq: number }> {
  const stat = await readFile("/proc/stat", "utf8");
  const line = stat.split("\n", 1)[0] ?? "";
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const sum = (ticks: (number | undefined)[]) => ticks.reduce<number>((n, t) => n + (t ?? 0), 0) * TICK_MS;
  return { busy: sum([user, nice, system, irq, softirq, steal]), irq: sum([irq, softirq]) };
}

/** The kernel's threads: kthreadd (pid 2) and its children. */
function kernelThreadsMs(all: ReadonlyMap<number, ProcStat>): number {
  let ms = 0;
  for (const [pid, p] of all) if (pid === 2 || p.ppid === 2) ms += p.own;
  return ms;
}

/** A process and its direct children (live ones by their own time, reaped ones through it). */
function treeMs(pid: number | undefined, all: ReadonlyMap<number, ProcStat>): number {
  const self = pid ? all.get(pid) : undefined;
  if (!self) return Number.NaN;
  let live = 0;
  for (const p of all.values()) if (p.ppid === pid) live += p.own + p.children;
  return self.own + self.children + live;
}

/** The workers' live process spawners: their own time and their reaped children's. */
function spawnersMs(workerPids: readonly (number | undefined)[], all: ReadonlyMap<number, ProcStat>): number {
  let ms = 0;
  for (const p of all.values()) {
    // The kernel keeps 15 characters of a process's name.
    if (p.comm === "overseer-spawne" && workerPids.includes(p.ppid)) ms += p.own + p.children;
  }
  return ms;
}

/** Every process's /proc/<pid>/stat, read once per sample. */
async function allProcesses(): Promise<Map<number, ProcStat>> {
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name));
  const stats = await Promise.all(pids.map(async (pid) => [Number(pid), await procStat(pid)] as const));
  return new Map(stats.flatMap(([pid, stat]) => (stat ? [[pid, stat] as const] : [])));
}

/** The CPU so far of the machine and of each part (the bench is this process). */
export async function sampleCpu(parts: CpuParts): Promise<CpuTotals> {
  const [machine, all] = await Promise.all([machineBusyMs(), allProcesses()]);
  const of = (pid: number | undefined) => (pid ? all.get(pid) : undefined);
  const workers = parts.workerPids.map(of);
  const usage = process.cpuUsage();
  return {
    machineMs: machine.busy,
    parts: {
      coordinator: of(parts.coordinatorPid)?.own ?? Number.NaN,
      workersOwn: workers.reduce((n, w) => n + (w?.own ?? 0), 0),
      workersChildren: workers.reduce((n, w) => n + (w?.children ?? 0), 0),
      workersSpawner: spawnersMs(parts.workerPids, all),
      postgres: treeMs(parts.postmasterPid, all),
      redis: of(parts.redisPid)?.own ?? Number.NaN,
      gateway: treeMs(parts.gatewayPid, all),
      bench: (usage.user + usage.system) / 1000 + (of(parts.probeClientPid)?.own ?? 0),
      // What the workers started beyond what their own and their spawners' times hold: the
      // sandboxes' init and agents, which no worker process reaps.
      workersSandboxes: parts.workersTreeMs
        ? parts.workersTreeMs() -
          workers.reduce((n, w) => n + (w?.own ?? 0) + (w?.children ?? 0), 0) -
          spawnersMs(parts.workerPids, all)
        : Number.NaN,
      kernelIrq: machine.irq,
      kernelThreads: kernelThreadsMs(all),
    },
  };
}

/** What was spent between two samples. */
export function cpuSpent(before: CpuTotals, after: CpuTotals): CpuTotals {
  const parts = Object.fromEntries(
    Object.entries(after.parts).map(([name, ms]) => [name, ms - (before.parts[name] ?? Number.NaN)]),
  );
  return { machineMs: after.machineMs - before.machineMs, parts };
}

/**
 * CPU ms per unit of work (a task, a run), each part and `other` (the machine's busy time no
 * part accounts for: processes outside the cluster), rounded to 0.1 ms.
 */
export function cpuPer(spent: CpuTotals, units: number): Record<string, number> | null {
  if (units <= 0) return null;
  const tenth = (n: number) => Math.round((n / units) * 10) / 10;
  const accounted = Object.values(spent.parts).reduce((n, ms) => n + (Number.isFinite(ms) ? ms : 0), 0);
  return {
    ...Object.fromEntries(Object.entries(spent.parts).map(([name, ms]) => [name, tenth(ms)])),
    other: tenth(spent.machineMs - accounted),
    machine: tenth(spent.machineMs),
  };
}

/** The parts' processes: the postmaster is a backend's parent; Redis says its own pid. */
export async function clusterCpuParts(
  backendPid: number,
  redisInfoServer: string,
  services: Pick<
    CpuParts,
    "coordinatorPid" | "workerPids" | "gatewayPid" | "probeClientPid" | "workersTreeMs"
  >,
): Promise<CpuParts> {
  const redisPid = /^process_id:(\d+)/m.exec(redisInfoServer)?.[1];
  return {
    ...services,
    postmasterPid: (await procStat(backendPid))?.ppid,
    redisPid: redisPid ? Number(redisPid) : undefined,
  };
}
