import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_SANDBOX_LIMITS } from "@overseer/run-contract";
import { describe, expect, it } from "vitest";
import {
  CGROUP_PLAN_DEFAULTS,
  type CgroupPlan,
  describeCgroupPlan,
  detectCgroupPlan,
  parseCgroupMounts,
  parseOwnCgroups,
  RunCgroup,
  resolveCgroupPlanOptions,
  sweepStaleRunCgroups,
} from "../src/cgroup-limits.ts";

const HYBRID_MOUNTINFO = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw`;

describe("cgroup discovery", () => {
  it("parses v1 and v2 mounts from mountinfo", () => {
    expect(parseCgroupMounts(HYBRID_MOUNTINFO)).toEqual([
      { version: 1, mountPoint: "/sys/fs/cgroup/cpu,cpuacct", root: "/", controllers: ["cpu"] },
      { version: 1, mountPoint: "/sys/fs/cgroup/memory", root: "/", controllers: ["memory"] },
      { version: 1, mountPoint: "/sys/fs/cgroup/pids", root: "/", controllers: ["pids"] },
      { version: 2, mountPoint: "/sys/fs/cgroup/unified", root: "/", controllers: [] },
    ]);
  });

  it("parses a pure v2 host and escaped mount points", () => {
    const mounts = parseCgroupMounts(
      "30 23 0:26 /kubepods /sys/fs/cgroup\\040x rw - cgroup2 cgroup2 rw,nsdelegate",
    );
    expect(mounts).toEqual([
      { version: 2, mountPoint: "/sys/fs/cgroup x", root: "/kubepods", controllers: [] },
    ]);
  });

  it("parses /proc/self/cgroup", () => {
    const own = parseOwnCgroups(
      "4:memory:/process_api/abc\n8:pids:/\n1:cpu,cpuacct:/x\n0::/system.slice/w.service\n",
    );
    expect(own.v2).toBe("/system.slice/w.service");
    expect(own.v1.get("memory")).toBe("/process_api/abc");
    expect(own.v1.get("cpu")).toBe("/x");
    expect(own.v1.get("pids")).toBe("/");
  });

  it("describes a host without cgroups honestly", () => {
    const described = describeCgroupPlan({
      pids: null,
      memory: null,
      cpu: null,
      kill: null,
      notes: ["no cgroupfs"],
    });
    expect(described.pids.enforced).toBe(false);
    expect(described.pids.detail).toContain("RLIMIT_NPROC cannot replace it");
    expect(described.memory).toMatchObject({ enforced: true, via: "rlimit" });
    expect(described.cpuRate.enforced).toBe(false);
  });
});

describe("run cgroups on this host", () => {
  it("creates per-run cgroups with the limits, and removes them (and the parents) on destroy", async (context) => {
    const plan = await detectCgroupPlan();
    if (plan.pids === null && plan.memory === null)
      context.skip(`no usable cgroups here: ${plan.notes.join("; ")}`);
    const cgroup = await RunCgroup.create(plan, `test-${process.pid}`, {
      ...DEFAULT_SANDBOX_LIMITS,
      pidsMax: 77,
      memoryBytes: 300 * 1024 ** 2,
    });
    expect(cgroup).not.toBeNull();
    try {
      if (plan.pids) expect(await cgroup?.readCounter("pids.max")).toBe(77);
      if (plan.memory?.version === 1)
        expect(await cgroup?.readCounter("memory.limit_in_bytes")).toBe(300 * 1024 ** 2);
      expect(cgroup?.procsFiles.length).toBe(cgroup?.dirs.length);
    } finally {
      await cgroup?.destroy();
    }
    for (const dir of cgroup?.dirs ?? []) expect(existsSync(dir)).toBe(false);
  });

  it("destroy kills what is still running in the run cgroups, then removes them", async (context) => {
    const plan = await detectCgroupPlan();
    if (plan.pids === null) context.skip("no pids cgroup here");
    const cgroup = await RunCgroup.create(plan, `busy-${process.pid}`, DEFAULT_SANDBOX_LIMITS);
    // Joins every run cgroup as the launcher does, then leaves a child behind that outlives it.
    const joins = (cgroup?.procsFiles ?? []).map((file) => `echo $$ > '${file}' || exit 125`);
    const child = spawn("/bin/sh", ["-c", [...joins, "exec sleep 60"].join("\n")], { stdio: "ignore" });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once("exit", (_, signal) => resolve(signal)),
    );
    try {
      await expect.poll(() => cgroup?.readCounter("pids.current") ?? 1, { timeout: 5_000 }).toBe(1);
    } finally {
      await cgroup?.destroy();
    }
    expect(await exited).toBe("SIGKILL");
    for (const dir of cgroup?.dirs ?? []) expect(existsSync(dir)).toBe(false);
  });

  it("sweeps run cgroups left by a worker that no longer exists", async (context) => {
    const plan = await detectCgroupPlan();
    if (plan.pids === null) context.skip("no pids cgroup here");
    let deadPid = 4_000_000;
    while (existsSync(`/proc/${deadPid}`)) deadPid++;
    const parent = plan.pids?.parentDir as string;
    const keeper = await RunCgroup.create(plan, `keeper-${process.pid}`, DEFAULT_SANDBOX_LIMITS);
    const stale = join(parent, `run-${deadPid}-crashed`);
    await sweepStaleRunCgroups([parent], { force: true });
    await mkdir(stale);
    // Runs sweep a parent at most every 30 s (one was just forced): the next run leaves it, the next sweep takes it.
    const next = await RunCgroup.create(plan, `next-${process.pid}`, DEFAULT_SANDBOX_LIMITS);
    try {
      expect(existsSync(stale)).toBe(true);
      await sweepStaleRunCgroups([parent], { force: true });
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(next?.dirs[0] as string)).toBe(true);
    } finally {
      await next?.destroy();
      await keeper?.destroy();
    }
  });
});

describe("cgroup discovery beside other workers", () => {
  it("finds the same limits when workers in one cgroup detect at once, while another's runs come and go", async (context) => {
    const single = await detectCgroupPlan();
    if (single.pids === null && single.memory === null)
      context.skip(`no usable cgroups here: ${single.notes.join("; ")}`);
    const enforced = (plan: CgroupPlan) => ({ pids: !!plan.pids, memory: !!plan.memory, cpu: !!plan.cpu });
    // A sibling worker's runs: each last one removes the shared parent, as RunCgroup.destroy does.
    let stop = false;
    const sibling = (async () => {
      for (let i = 0; !stop; i++)
        await (
          await RunCgroup.create(single, `sibling-${process.pid}-${i}`, DEFAULT_SANDBOX_LIMITS)
        )?.destroy();
    })();
    try {
      // Before the probe held the shared parent, most of these lost a limit (the parent another
      // detection had created vanished mid-probe) and that worker would refuse every run.
      for (let round = 0; round < 10; round++) {
        const plans = await Promise.all(Array.from({ length: 4 }, () => detectCgroupPlan()));
        for (const plan of plans) expect(enforced(plan), plan.notes.join("; ")).toEqual(enforced(single));
      }
    } finally {
      stop = true;
      await sibling;
    }
    for (const home of [single.pids, single.memory, single.cpu]) {
      const left = home ? await readdir(home.parentDir).catch(() => []) : [];
      expect(left.filter((name) => name.startsWith(`run-${process.pid}-`))).toEqual([]);
    }
  });
});

describe("resolveCgroupPlanOptions", () => {
  it("fills mode and parentName from CGROUP_PLAN_DEFAULTS", () => {
    expect(resolveCgroupPlanOptions()).toEqual({ mode: "auto", parentName: "overseer" });
    expect(resolveCgroupPlanOptions({})).toEqual(CGROUP_PLAN_DEFAULTS);
    expect(Object.isFrozen(CGROUP_PLAN_DEFAULTS)).toBe(true);
  });

  it("keeps what the caller set", () => {
    expect(resolveCgroupPlanOptions({ mode: "off", parentName: "overseer-w2" })).toEqual({
      mode: "off",
      parentName: "overseer-w2",
    });
  });
});
