/**
 * Everything a worker started, counted exactly: the scale bench puts each worker process into
 * its own cgroup of the v1 `cpuacct` hierarchy right after spawning it, before it starts anything
 * (its process spawner, git, the sandboxes). Children stay in their parent's cgroup whatever
 * happens to the parent, so the cgroup's `cpuacct.usage` also holds what no parent reaps: the
 * sandbox's init and the agent's processes, which end without bwrap waiting for them when the
 * worker ends the run's process group, and which /proc's per-process times would otherwise leave
 * to `other` (scale-cpu.ts).
 *
 * Only where a v1 `cpuacct` hierarchy is mounted and writable (as on this kind of host, beside the
 * unified hierarchy). On a v2-only host the worker's own cgroup is where its run cgroups live
 * (cgroup-limits.ts), so the bench leaves it where it is and reports no figure.
 */
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** The v1 cpuacct hierarchy's dir for this process's cgroup, or null. */
function ownCpuacctDir(): string | null {
  const mountinfo = readFileSync("/proc/self/mountinfo", "utf8");
  const mount = mountinfo
    .split("\n")
    .map((line) => line.split(" - "))
    .find(([, right]) => right?.startsWith("cgroup ") && right.split(" ")[2]?.split(",").includes("cpuacct"));
  const [left] = mount ?? [];
  if (left === undefined) return null;
  const [, , , root = "/", mountPoint = ""] = left.split(" ");
  const own = readFileSync("/proc/self/cgroup", "utf8")
    .split("\n")
    .map((line) => /^\d+:([^:]*):(.*)$/.exec(line))
    .find((m) => m?.[1]?.split(",").includes("cpuacct"))?.[2];
  if (own === undefined || !own.startsWith(root)) return null;
  return path.join(mountPoint, own.slice(root.length));
}

export class WorkerAccounting {
  private readonly dirs: string[] = [];

  private constructor(private readonly root: string) {}

  /** A cgroup for this bench's workers, or null where none can be made (the figure is then null). */
  static create(): WorkerAccounting | null {
    try {
      const own = ownCpuacctDir();
      if (own === null) return null;
      const root = path.join(own, `overseer-bench-${process.pid}`);
      mkdirSync(root);
      return new WorkerAccounting(root);
    } catch {
      return null;
    }
  }

  /**
   * Moves a just-spawned worker into a cgroup of its own. Called right after spawn: the worker
   * starts nothing before its modules load, tens of ms later.
   */
  join(pid: number | undefined): void {
    if (pid === undefined) return;
    const dir = path.join(this.root, `worker-${pid}`);
    mkdirSync(dir);
    this.dirs.push(dir);
    writeFileSync(path.join(dir, "cgroup.procs"), String(pid));
  }

  /** ms of CPU of the workers and every process they started, ended ones included, so far. */
  usageMs(): number {
    return Number(readFileSync(path.join(this.root, "cpuacct.usage"), "utf8").trim()) / 1e6;
  }

  /**
   * Removes the cgroups once the workers' processes are gone: a spawner outlives its worker by a
   * moment. Best effort, within 5 s: a cgroup something still runs in stays.
   */
  async remove(): Promise<void> {
    const deadline = Date.now() + 5_000;
    for (const dir of [...this.dirs, this.root]) {
      for (;;) {
        try {
          rmdirSync(dir);
          break;
        } catch {
          if (Date.now() > deadline) break;
          await sleep(50);
        }
      }
    }
  }
}
