import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { constants, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isProcessAlive } from "@overseer/process";
import { releaseParentLater } from "./cgroup-parent-linger.ts";
import { canAccess } from "./path-access.ts";
import type { LimitEnforcement } from "./sandbox-driver.ts";
import type { SandboxLimits } from "./sandbox-spec-schema.ts";

/**
 * Per-run cgroups for the bwrap driver.
 *
 * Why cgroups: the sandbox user maps to host uid 0, and the kernel exempts uid 0 from
 * RLIMIT_NPROC, so only a pids cgroup bounds a fork bomb; likewise only a memory cgroup bounds a
 * whole process tree (RLIMIT_AS is per process and counts virtual, not resident, memory).
 *
 * Layout: for every hierarchy that carries a controller we need (v2 unified, or v1 per-controller
 * mounts, or a hybrid of both as on this kind of host), a parent `<worker's own cgroup>/<parentName>`
 * holds one child per run, `run-<workerPid>-<runId>`. Parents exist while runs do and a few seconds
 * after, for the next run (cgroup-parent-linger.ts; an empty leftover child would keep whoever
 * manages the worker's own cgroup from removing it). Nesting under the worker's own cgroup keeps
 * the host's accounting of the worker intact. The spawn wrapper writes its own pid into every
 * run cgroup's `cgroup.procs` before it execs bwrap, so bwrap and everything below start inside.
 *
 * Lifecycle: `RunCgroup.create` (prepare) → wrapper joins → run → `destroy` (cleanup) kills what
 * is left (cgroup.kill on v2, or SIGKILL of each listed pid) and removes the directories. Run
 * cgroups left behind by a crashed worker (its pid no longer alive) are swept on the next create.
 */

const CONTROLLERS = ["pids", "memory", "cpu"] as const;
type Controller = (typeof CONTROLLERS)[number];

export interface CgroupMount {
  version: 1 | 2;
  mountPoint: string;
  /** The mount's root inside the cgroup hierarchy (non-"/" when a subtree is bind-mounted). */
  root: string;
  /** v1: the controllers this mount carries; v2: empty (read from cgroup.controllers). */
  controllers: string[];
}

/** Parses `/proc/self/mountinfo` for cgroup (v1) and cgroup2 mounts. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (left === undefined || right === undefined) continue;
    const fields = left.split(" ");
    const [fstype, , superOptions] = right.split(" ");
    const root = unescapeMountPath(fields[3] ?? "/");
    const mountPoint = unescapeMountPath(fields[4] ?? "");
    if (fstype === "cgroup2") mounts.push({ version: 2, mountPoint, root, controllers: [] });
    if (fstype === "cgroup") {
      const controllers = (superOptions ?? "")
        .split(",")
        .filter((o) => (CONTROLLERS as readonly string[]).includes(o));
      if (controllers.length > 0) mounts.push({ version: 1, mountPoint, root, controllers });
    }
  }
  return mounts;
}

function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Parses `/proc/self/cgroup` into `{ v2: path, v1: { controller: path } }`. */
export function parseOwnCgroups(text: string): { v2: string | null; v1: Map<string, string> } {
  const v1 = new Map<string, string>();
  let v2: string | null = null;
  for (const line of text.split("\n")) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (match === null) continue;
    const [, id, controllers, path] = match as unknown as [string, string, string, string];
    if (id === "0" && controllers === "") v2 = path;
    else for (const controller of controllers.split(",")) v1.set(controller, path);
  }
  return { v2, v1 };
}

function hierarchyDir(mount: CgroupMount, ownPath: string): string {
  const relative =
    mount.root !== "/" && ownPath.startsWith(mount.root) ? ownPath.slice(mount.root.length) : ownPath;
  return join(mount.mountPoint, relative);
}

interface ControllerHome {
  version: 1 | 2;
  /** The per-worker parent directory holding the run cgroups. */
  parentDir: string;
  /** v2 only: controllers to enable in the parent's cgroup.subtree_control whenever it is (re)created. */
  enable?: string[];
}

/** Which hierarchy (if any) enforces each limit on this host, decided once per driver. */
export interface CgroupPlan {
  pids: ControllerHome | null;
  memory: ControllerHome | null;
  cpu: ControllerHome | null;
  /** A v2 parent whose run cgroups have `cgroup.kill`. */
  kill: ControllerHome | null;
  /** Why something is unavailable, for `doctor`. */
  notes: string[];
}

export interface CgroupPlanOptions {
  /** `auto`: use cgroups where the host allows; `off`: never (rlimits only). Default `auto`. */
  mode?: "auto" | "off";
  /** Directory created under the worker's own cgroup to hold per-run cgroups. Default `overseer`. */
  parentName?: string;
}

/** The cgroup plan option defaults, in one place; `resolveCgroupPlanOptions` applies them. */
export const CGROUP_PLAN_DEFAULTS = Object.freeze({ mode: "auto", parentName: "overseer" } as const);

/** The cgroup plan options with every default filled in. */
export type ResolvedCgroupPlanOptions = Readonly<{ mode: "auto" | "off"; parentName: string }>;

export function resolveCgroupPlanOptions(options: CgroupPlanOptions = {}): ResolvedCgroupPlanOptions {
  return Object.freeze({
    mode: options.mode ?? CGROUP_PLAN_DEFAULTS.mode,
    parentName: options.parentName ?? CGROUP_PLAN_DEFAULTS.parentName,
  });
}

const EMPTY_PLAN = (notes: string[]): CgroupPlan => ({
  pids: null,
  memory: null,
  cpu: null,
  kill: null,
  notes,
});

const V1_PROBE_FILE: Record<Controller, string> = {
  pids: "pids.max",
  memory: "memory.limit_in_bytes",
  cpu: "cpu.cfs_quota_us",
};

/**
 * Finds writable, usable hierarchies for pids, memory and cpu. Creates the per-worker parent
 * directories (and, on v2, enables the controllers for their children) as a side effect.
 */
export async function detectCgroupPlan(input: CgroupPlanOptions = {}): Promise<CgroupPlan> {
  const options = resolveCgroupPlanOptions(input);
  if (options.mode === "off") return EMPTY_PLAN(["cgroups disabled by the driver option cgroups.mode=off"]);
  if (process.platform !== "linux") return EMPTY_PLAN(["cgroups exist only on Linux"]);
  const { parentName } = options;
  let mounts: CgroupMount[];
  let own: ReturnType<typeof parseOwnCgroups>;
  try {
    mounts = parseCgroupMounts(await readFile("/proc/self/mountinfo", "utf8"));
    own = parseOwnCgroups(await readFile("/proc/self/cgroup", "utf8"));
  } catch (error) {
    return EMPTY_PLAN([`cannot read /proc/self/mountinfo or /proc/self/cgroup: ${(error as Error).message}`]);
  }
  const plan = EMPTY_PLAN([]);

  const v2Mount = mounts.find((m) => m.version === 2);
  if (v2Mount !== undefined && own.v2 !== null) {
    const ownDir = hierarchyDir(v2Mount, own.v2);
    const parentDir = join(ownDir, parentName);
    try {
      const release = await holdParent(parentDir);
      try {
        await enableV2Controllers(ownDir, parentDir, plan);
      } finally {
        // Leave nothing behind: RunCgroup.create re-creates the parent (and re-enables the controllers).
        await release();
      }
    } catch (error) {
      plan.notes.push(`cgroup v2 at ${v2Mount.mountPoint} is not usable: ${(error as Error).message}`);
    }
  }

  for (const controller of CONTROLLERS) {
    if (plan[controller] !== null) continue;
    const mount = mounts.find((m) => m.version === 1 && m.controllers.includes(controller));
    const ownPath = own.v1.get(controller);
    if (mount === undefined || ownPath === undefined) {
      plan.notes.push(`no cgroup hierarchy offers the ${controller} controller to this process`);
      continue;
    }
    const parentDir = join(hierarchyDir(mount, ownPath), parentName);
    try {
      const release = await holdParent(parentDir);
      const usable = await Promise.all([
        canAccess(parentDir, constants.W_OK),
        canAccess(join(parentDir, V1_PROBE_FILE[controller])),
      ]).finally(release);
      if (!usable.every(Boolean)) {
        plan.notes.push(
          `cgroup v1 ${controller} at ${parentDir} is not writable or lacks ${V1_PROBE_FILE[controller]}`,
        );
        continue;
      }
      plan[controller] = { version: 1, parentDir };
    } catch (error) {
      plan.notes.push(
        `cgroup v1 ${controller} at ${mount.mountPoint} is not usable: ${(error as Error).message}`,
      );
    }
  }
  return plan;
}

/** v2: enables pids, memory and cpu for the run cgroups under `parentDir` where the host allows; notes why not. */
async function enableV2Controllers(ownDir: string, parentDir: string, plan: CgroupPlan): Promise<void> {
  const readControllers = async (dir: string) =>
    (await readFile(join(dir, "cgroup.controllers"), "utf8")).trim().split(/\s+/).filter(Boolean);
  let available = await readControllers(parentDir);
  const missing = CONTROLLERS.filter((c) => !available.includes(c));
  if (missing.length > 0) {
    const offered = await readControllers(ownDir);
    for (const controller of missing.filter((c) => offered.includes(c))) {
      try {
        await writeFile(join(ownDir, "cgroup.subtree_control"), `+${controller}`);
      } catch (error) {
        plan.notes.push(
          `cgroup v2: cannot enable ${controller} below ${ownDir} (${(error as NodeJS.ErrnoException).code}); run the worker in a delegated cgroup leaf (e.g. systemd Delegate=yes)`,
        );
      }
    }
    available = await readControllers(parentDir);
  }
  const home: ControllerHome = { version: 2, parentDir, enable: [] };
  for (const controller of CONTROLLERS.filter((c) => available.includes(c))) {
    try {
      await writeFile(join(parentDir, "cgroup.subtree_control"), `+${controller}`);
      home.enable?.push(controller);
      plan[controller] = home;
    } catch (error) {
      plan.notes.push(`cgroup v2: cannot enable ${controller} in ${parentDir}: ${(error as Error).message}`);
    }
  }
  if (await canAccess(join(parentDir, "cgroup.kill"))) plan.kill = home;
}

let probes = 0;

/**
 * Creates the per-worker parent `parentDir` (when absent) with a probe child in it, so that the
 * parent stays while the plan looks at it: every worker in the same cgroup shares the parent, and
 * another one's probe or last run removes it when empty (before this hold, two workers started
 * together saw each other's parent vanish mid-probe and one of them, thinking its memory and pids
 * limits unenforceable, refused every run). The probe child is named like a run cgroup, so a
 * crashed worker's is swept. Returns the release: removes the child, then the parent if empty.
 */
async function holdParent(parentDir: string): Promise<() => Promise<void>> {
  const probe = join(parentDir, `run-${process.pid}-probe-${++probes}`);
  activeRunDirs.add(probe);
  try {
    await mkdirWithParentRetry(parentDir, probe, []);
  } catch (error) {
    activeRunDirs.delete(probe);
    throw error;
  }
  return async () => {
    await rmdir(probe).catch(() => undefined);
    activeRunDirs.delete(probe);
    // EBUSY while another worker's runs or probes use it.
    await rmdir(parentDir).catch(() => undefined);
  };
}

/** Human-readable enforcement report for each limit, given a plan. */
export function describeCgroupPlan(plan: CgroupPlan): {
  pids: LimitEnforcement;
  memory: LimitEnforcement;
  cpuRate: LimitEnforcement;
  killAll: LimitEnforcement;
} {
  const via = (home: ControllerHome): "cgroup-v2" | "cgroup-v1" =>
    home.version === 2 ? "cgroup-v2" : "cgroup-v1";
  const why = plan.notes.length > 0 ? ` (${plan.notes.join("; ")})` : "";
  return {
    pids: plan.pids
      ? {
          enforced: true,
          via: via(plan.pids),
          detail: `pids.max in a per-run cgroup under ${plan.pids.parentDir}`,
        }
      : {
          enforced: false,
          via: "none",
          detail: `no usable pids cgroup${why}; RLIMIT_NPROC cannot replace it because the sandbox user is host uid 0, which the kernel exempts`,
        },
    memory: plan.memory
      ? {
          enforced: true,
          via: via(plan.memory),
          detail: `${plan.memory.version === 2 ? "memory.max" : "memory.limit_in_bytes"} (whole run, tmpfs included) under ${plan.memory.parentDir}`,
        }
      : {
          enforced: true,
          via: "rlimit",
          detail: `RLIMIT_AS per process (virtual memory; a process tree may exceed it in total)${why}`,
        },
    cpuRate: plan.cpu
      ? {
          enforced: true,
          via: via(plan.cpu),
          detail: `CPU bandwidth quota under ${plan.cpu.parentDir} when limits.cpus is set`,
        }
      : { enforced: false, via: "none", detail: `no usable cpu cgroup${why}; limits.cpus is ignored` },
    killAll: plan.kill
      ? { enforced: true, via: "cgroup-v2", detail: "cgroup.kill ends every process of the run at cleanup" }
      : plan.pids || plan.memory
        ? { enforced: true, via: "cgroup-v1", detail: "cleanup SIGKILLs every pid listed in the run cgroup" }
        : {
            enforced: true,
            via: "pid-namespace",
            detail: "the pid namespace with --die-with-parent: killing bwrap kills every process of the run",
          },
  };
}

const DESTROY_TIMEOUT_MS = 5_000;

/** Run cgroup directories this process created and has not destroyed yet (not swept as stale). */
const activeRunDirs = new Set<string>();
/** Longest wait between two rmdir attempts of a busy run cgroup. */
const DESTROY_POLL_MS = 20;
/**
 * Least time between two sweeps of one parent for stale run cgroups (sweepStaleRunCgroups).
 * Leftovers appear only when a worker dies, so a sweep before every run (a cgroupfs readdir, about
 * 0.5 ms with a busy fleet's runs listed, plus a liveness check per other worker's entry) found
 * nothing almost every time; one sweep per interval reclaims a dead worker's leftovers soon enough.
 */
const SWEEP_EVERY_MS = 30_000;
/** When each parent was last swept (performance.now()). */
const lastSweeps = new Map<string, number>();

/*
 * A run's cgroup files are read and written synchronously: cgroupfs is kernel state in memory, so
 * each call returns in microseconds and never waits on a disk, while every asynchronous call cost
 * the worker a thread-pool round trip (~50 µs of CPU, ~40 of them per run). Only rmdir stays
 * asynchronous: removing a memory cgroup can wait in the kernel for milliseconds.
 */

function readPids(dir: string): number[] {
  try {
    return readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A `key value` line of the flat-keyed file `file` of run cgroup `dir`, or null (no such file or key). */
function readKeyedIn(dir: string, file: string, key: string): number | null {
  let text: string;
  try {
    text = readFileSync(join(dir, file), "utf8");
  } catch {
    return null; // not in this hierarchy, or not on this kernel
  }
  const line = text.split("\n").find((l) => l.startsWith(`${key} `));
  return line === undefined ? null : Number(line.slice(key.length + 1).trim());
}

function writeOptional(path: string, value: string): void {
  try {
    writeFileSync(path, value);
  } catch {
    // Optional knob (memsw, swap.max, oom.group) missing or refused on this kernel: the main limit still holds.
  }
}

/** Where a run's limit counters are: the run cgroup of the pids and of the memory hierarchy. */
interface CounterDirs {
  pids: string | null;
  memory: { dir: string; version: 1 | 2 } | null;
}

/** One run's cgroup directories (one per hierarchy in use). */
export class RunCgroup {
  private destroyed = false;

  private constructor(
    /** Run cgroup directories, each with its own `cgroup.procs`. */
    readonly dirs: readonly string[],
    private readonly killDir: string | null,
    private readonly parentDirs: readonly string[],
    private readonly counters: CounterDirs,
  ) {}

  /** Files the spawn wrapper must write its pid into, in order. */
  get procsFiles(): string[] {
    return this.dirs.map((dir) => join(dir, "cgroup.procs"));
  }

  /** Creates the run's cgroups and writes the limits. Returns null when the plan has no hierarchy. */
  static async create(plan: CgroupPlan, runId: string, limits: SandboxLimits): Promise<RunCgroup | null> {
    // The cpu hierarchy is joined only when a rate is requested: every cgroup join is a migration
    // the spawn pays for.
    const cpu = limits.cpus !== undefined ? plan.cpu : null;
    const homes = [plan.pids, plan.memory, cpu, plan.kill].filter((h): h is ControllerHome => h !== null);
    const parents = [...new Set(homes.map((h) => h.parentDir))];
    if (parents.length === 0) return null;
    const enableIn = new Map(homes.map((h) => [h.parentDir, h.enable ?? []]));
    await sweepStaleRunCgroups(parents);
    const name = `run-${process.pid}-${runId}`;
    const dirs: string[] = [];
    const counters: CounterDirs = {
      pids: plan.pids ? join(plan.pids.parentDir, name) : null,
      memory: plan.memory ? { dir: join(plan.memory.parentDir, name), version: plan.memory.version } : null,
    };
    const killDir = plan.kill ? join(plan.kill.parentDir, name) : null;
    const cgroup = new RunCgroup(dirs, killDir, parents, counters);
    try {
      for (const parent of parents) {
        const dir = join(parent, name);
        activeRunDirs.add(dir); // before mkdir: a concurrent sweep in this process must not take it
        try {
          await mkdirWithParentRetry(parent, dir, enableIn.get(parent) ?? []);
        } catch (error) {
          activeRunDirs.delete(dir);
          throw error;
        }
        dirs.push(dir);
      }
      const dirOf = (home: ControllerHome) => join(home.parentDir, name);
      if (plan.pids) writeFileSync(join(dirOf(plan.pids), "pids.max"), String(limits.pidsMax));
      if (plan.memory?.version === 2) {
        writeFileSync(join(dirOf(plan.memory), "memory.max"), String(limits.memoryBytes));
        writeOptional(join(dirOf(plan.memory), "memory.swap.max"), "0");
        writeOptional(join(dirOf(plan.memory), "memory.oom.group"), "1");
      } else if (plan.memory) {
        writeFileSync(join(dirOf(plan.memory), "memory.limit_in_bytes"), String(limits.memoryBytes));
        writeOptional(join(dirOf(plan.memory), "memory.memsw.limit_in_bytes"), String(limits.memoryBytes));
      }
      if (cpu && limits.cpus !== undefined) {
        const period = 100_000;
        const quota = Math.max(1_000, Math.round(limits.cpus * period));
        if (cpu.version === 2) writeFileSync(join(dirOf(cpu), "cpu.max"), `${quota} ${period}`);
        else {
          writeFileSync(join(dirOf(cpu), "cpu.cfs_period_us"), String(period));
          writeFileSync(join(dirOf(cpu), "cpu.cfs_quota_us"), String(quota));
        }
      }
      return cgroup;
    } catch (error) {
      await cgroup.destroy();
      throw error;
    }
  }

  /** Reads a counter from the run cgroup that holds `file` (e.g. `pids.peak`), or null. */
  async readCounter(file: string): Promise<number | null> {
    for (const dir of this.dirs) {
      try {
        return Number(readFileSync(join(dir, file), "utf8").trim());
      } catch {
        // not in this hierarchy
      }
    }
    return null;
  }

  /**
   * The run's limits it ran into, one line each for the run's failure (`pids_max 64 reached:
   * 212 forks refused`), read before `destroy`. Only what the cgroup counted: forks the pids
   * controller refused (`pids.events` max) and processes the memory controller's OOM killer ended
   * (`memory.events` or `memory.oom_control` oom_kill).
   */
  async limitsReached(limits: SandboxLimits): Promise<string[]> {
    const reached: string[] = [];
    // Each file is read in the one hierarchy that carries it (pids.events in the pids cgroup;
    // memory.events on v2, memory.oom_control on v1, in the memory cgroup): a read tried in
    // every run cgroup failed (ENOENT, an exception) four times per run for nothing.
    const { pids, memory } = this.counters;
    const forksRefused = pids === null ? null : readKeyedIn(pids, "pids.events", "max");
    if (forksRefused !== null && forksRefused > 0)
      reached.push(`pids_max ${limits.pidsMax} reached: ${forksRefused} forks refused`);
    const oomFile = memory?.version === 2 ? "memory.events" : "memory.oom_control";
    const oomKills = memory === null ? null : readKeyedIn(memory.dir, oomFile, "oom_kill");
    if (oomKills !== null && oomKills > 0) {
      const mb = Math.round(limits.memoryBytes / 1024 / 1024);
      reached.push(
        `memory_mb ${mb} reached: ${oomKills} process${oomKills === 1 ? "" : "es"} killed out of memory`,
      );
    }
    return reached;
  }

  /** Kills every process still in the run cgroups. */
  async killAll(): Promise<void> {
    if (this.killDir !== null) writeOptional(join(this.killDir, "cgroup.kill"), "1");
    for (const dir of this.dirs) for (const pid of readPids(dir)) killQuietly(pid);
  }

  /** Kills what is left and removes the directories (bounded wait). Idempotent. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    try {
      await destroyDirs(this.dirs, this.killDir);
    } finally {
      for (const dir of this.dirs) activeRunDirs.delete(dir);
    }
    // Leave no empty per-worker parent behind, a few seconds later (cgroup-parent-linger.ts).
    for (const parent of this.parentDirs) releaseParentLater(parent);
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/**
 * Removes run cgroup directories, killing what is still inside first. Every process of a run is in
 * the first directory (the launcher joins them in order before it execs bwrap), so the common case
 * — the run has ended — is one rmdir per directory with nothing to read or kill: an rmdir succeeds
 * only on an empty cgroup. On EBUSY (processes left, or an exiting one the kernel has not released
 * yet: bwrap returns once the command's status is known, while the sandbox's init may still be
 * exiting) it kills (cgroup.kill, then every listed pid) and retries after 1, 2, 4… up to 20 ms.
 */
async function destroyDirs(dirs: readonly string[], killDir: string | null): Promise<void> {
  const deadline = Date.now() + DESTROY_TIMEOUT_MS;
  let killSent = false;
  for (const dir of dirs) {
    for (let attempt = 0; ; attempt++) {
      try {
        await rmdir(dir);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") break;
        if (!killSent && killDir !== null) writeOptional(join(killDir, "cgroup.kill"), "1");
        killSent = true;
        for (const pid of readPids(dir)) killQuietly(pid);
        if (Date.now() >= deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, destroyPollMs(attempt)));
      }
    }
  }
}

/** Wait before the next rmdir of a busy run cgroup: 1, 2, 4, 8, 16, then 20 ms. */
function destroyPollMs(attempt: number): number {
  return Math.min(DESTROY_POLL_MS, 2 ** attempt);
}

/**
 * mkdir of a run cgroup. The per-worker parent is created on demand (and removed by the last
 * run's cleanup), so only an ENOENT makes it (re)create the parent; a concurrent cleanup may
 * remove it between the two mkdirs, hence the retry.
 */
async function mkdirWithParentRetry(parent: string, dir: string, enable: readonly string[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 3) throw error;
    }
    const created = mkdirSync(parent, { recursive: true });
    if (created !== undefined && enable.length > 0) {
      writeFileSync(join(parent, "cgroup.subtree_control"), enable.map((c) => `+${c}`).join(" "));
    }
  }
}

/**
 * Removes `run-<pid>-*` cgroups whose worker is gone (a crashed worker's leftovers), and our own
 * pid's entries that this process did not create (a previous incarnation with the same pid, as
 * happens to pid 1 of a restarted container). Each parent at most every SWEEP_EVERY_MS unless `force`.
 */
export async function sweepStaleRunCgroups(
  parents: readonly string[],
  { force = false }: { force?: boolean } = {},
): Promise<void> {
  const now = performance.now();
  for (const parent of parents) {
    const last = lastSweeps.get(parent);
    if (!force && last !== undefined && now - last < SWEEP_EVERY_MS) continue;
    lastSweeps.set(parent, now);
    let entries: string[];
    try {
      entries = readdirSync(parent);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const match = /^run-(\d+)-/.exec(entry);
      if (match === null) continue;
      const owner = Number(match[1]);
      const ours = owner === process.pid;
      if ((ours && activeRunDirs.has(join(parent, entry))) || (!ours && isProcessAlive(owner))) continue;
      await destroyDirs([join(parent, entry)], null).catch(() => undefined);
    }
  }
}
