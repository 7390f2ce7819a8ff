import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NoneDriver, runPreparedCommand } from "../src/index.ts";

let base: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "overseer-none-test-"));
  await mkdir(join(base, "checkout"));
  await mkdir(join(base, "control"));
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("NoneDriver (unsafe)", () => {
  const driver = new NoneDriver();
  const spec = (env: Record<string, string>) => ({
    checkoutDir: join(base, "checkout"),
    controlDir: join(base, "control"),
    env,
  });

  it("runs argv directly in the checkout with only spec.env", async () => {
    process.env.OVERSEER_TEST_NONE_LEAK = "leak";
    try {
      const prepared = await driver.prepare(["/usr/bin/env"], spec({ ONLY: "this" }));
      const result = await runPreparedCommand(prepared);
      await prepared.cleanup();
      expect(result.stdout).toBe("ONLY=this\n");
      expect(prepared.cwd).toBe(join(base, "checkout"));
    } finally {
      delete process.env.OVERSEER_TEST_NONE_LEAK;
    }
  });

  it("stop() terminates the process group gracefully", async () => {
    const prepared = await driver.prepare(
      [
        "/bin/sh",
        "-c",
        "trap 'echo term > stopped.txt; exit 3' TERM; touch ready; while :; do sleep 0.05; done",
      ],
      spec({ PATH: "/usr/bin:/bin" }),
    );
    let pid = 0;
    const run = runPreparedCommand(prepared, { onSpawn: (p) => (pid = p) });
    await expect.poll(() => existsSync(join(base, "checkout", "ready")), { timeout: 10_000 }).toBe(true);
    await prepared.stop(pid, { graceMs: 3_000 });
    const result = await run;
    expect(result.exitCode).toBe(3);
    expect(await readFile(join(base, "checkout", "stopped.txt"), "utf8")).toBe("term\n");
    await prepared.cleanup();
  });

  it("probe() runs and reports unsafe: writes outside and network are NOT denied", async () => {
    const report = await driver.probe();
    expect(report.unsafe).toBe(true);
    expect(report.writeInside.ok).toBe(true);
    expect(report.writeOutsideDenied.ok).toBe(false);
    expect(report.problems[0]).toContain("UNSAFE");
    expect(Object.values(report.limits).every((limit) => !limit.enforced)).toBe(true);
  });
});
