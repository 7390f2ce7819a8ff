import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { DEFAULT_SANDBOX_LIMITS } from "@overseer/run-contract";
import { describe, expect, it } from "vitest";
import { detectCgroupPlan, RunCgroup } from "../src/cgroup-limits.ts";
import { removeLingeringParents } from "../src/cgroup-parent-linger.ts";

describe("per-worker cgroup parents", () => {
  it("stay for the next run after the last one ends, and go when released (at exit)", async (context) => {
    // A parent of this test's own: others' runs would share (and hold) the default one.
    const plan = await detectCgroupPlan({ parentName: `overseer-linger-${process.pid}` });
    if (plan.pids === null && plan.memory === null)
      context.skip(`no usable cgroups here: ${plan.notes.join("; ")}`);
    const first = await RunCgroup.create(plan, "first", DEFAULT_SANDBOX_LIMITS);
    const parents = (first?.dirs ?? []).map((dir) => dirname(dir));
    await first?.destroy();
    for (const dir of first?.dirs ?? []) expect(existsSync(dir)).toBe(false);
    for (const parent of parents) expect(existsSync(parent)).toBe(true);
    // The next run finds its parents in place, with the same limits.
    const next = await RunCgroup.create(plan, "next", { ...DEFAULT_SANDBOX_LIMITS, pidsMax: 33 });
    try {
      if (plan.pids) expect(await next?.readCounter("pids.max")).toBe(33);
      // A parent in use is never removed.
      removeLingeringParents();
      for (const dir of next?.dirs ?? []) expect(existsSync(dir)).toBe(true);
    } finally {
      await next?.destroy();
    }
    removeLingeringParents();
    for (const parent of parents) expect(existsSync(parent)).toBe(false);
  });

  it("are removed when the process exits within the linger", async (context) => {
    const parentName = `overseer-linger-exit-${process.pid}`;
    const plan = await detectCgroupPlan({ parentName });
    if (plan.pids === null && plan.memory === null)
      context.skip(`no usable cgroups here: ${plan.notes.join("; ")}`);
    const script = [
      `import { detectCgroupPlan, RunCgroup } from ${JSON.stringify(join(import.meta.dirname, "../src/cgroup-limits.ts"))};`,
      `const plan = await detectCgroupPlan({ parentName: ${JSON.stringify(parentName)} });`,
      "const run = await RunCgroup.create(plan, 'exit', { pidsMax: 10, memoryBytes: 2 ** 28, cpuSeconds: 10, tmpfsBytes: 2 ** 20 });",
      "await run?.destroy();",
      "console.log(JSON.stringify((run?.dirs ?? []).map((dir) => dir.slice(0, dir.lastIndexOf('/')))));",
    ].join("\n");
    const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(result.status, result.stderr).toBe(0);
    const parents = JSON.parse(result.stdout) as string[];
    expect(parents.length).toBeGreaterThan(0);
    for (const parent of parents) expect(existsSync(parent)).toBe(false);
  });
});
