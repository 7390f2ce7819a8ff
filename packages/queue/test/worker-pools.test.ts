import { DEFAULT_POOL, poolNameSchema } from "@overseer/run-contract";
import { describe, expect, it } from "vitest";
import { poolWaiting, RUN_QUEUE, runQueueName, servedPools } from "../src/index.ts";

describe("worker pool routing", () => {
  it("keeps the default pool on the run queue every worker served before pools, and gives each other pool its own", () => {
    expect(runQueueName(DEFAULT_POOL)).toBe(RUN_QUEUE);
    expect(runQueueName("jdk")).toBe("runs-jdk");
    expect(runQueueName("gpu")).not.toBe(runQueueName("jdk"));
  });

  it("accepts pool names that make valid queue names, and names what it expected otherwise", () => {
    expect(poolNameSchema.parse("gpu-a100_2")).toBe("gpu-a100_2");
    for (const bad of ["", "JDK", "a:b", "-x", "a b", "x".repeat(64)]) {
      const parsed = poolNameSchema.safeParse(bad);
      expect(parsed.success, bad).toBe(false);
      expect(parsed.error?.issues[0]?.message).toContain(`received ${JSON.stringify(bad)}`);
    }
  });

  it("counts a pool as served only by a live worker that is not draining", () => {
    const served = servedPools([
      { pools: ["default", "gpu"], draining: false },
      { pools: ["jdk"], draining: true },
    ]);
    expect([...served].sort()).toEqual(["default", "gpu"]);
    expect(poolWaiting("gpu", served)).toBeNull();
    expect(poolWaiting("jdk", served)).toBe("waiting for a worker in pool jdk");
    expect(poolWaiting("default", servedPools([]))).toBe("waiting for a worker in pool default");
  });
});
