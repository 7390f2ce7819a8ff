import { afterAll, describe, expect, it } from "vitest";
import { measureSpawnOverhead, NoneDriver, percentile } from "../src/index.ts";
import { disposeDrivers, newDriver } from "./helpers/sandbox-fixture.ts";

afterAll(disposeDrivers);

describe("measureSpawnOverhead", () => {
  it("computes nearest-rank percentiles", () => {
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99)).toBe(10);
    expect(Number.isNaN(percentile([], 50))).toBe(true);
  });

  it.each([
    ["bwrap", () => newDriver()],
    ["none", () => new NoneDriver()],
  ])("measures plain vs %s spawns (shape only; the bench suite reports numbers)", async (name, make) => {
    const result = await measureSpawnOverhead({ driver: make(), iterations: 3, warmup: 1 });
    expect(result.driver).toBe(name);
    expect(result.iterations).toBe(3);
    for (const key of ["p50Ms", "p99Ms", "plainP50Ms", "plainP99Ms", "totalP50Ms", "totalP99Ms"] as const) {
      expect(result[key]).toBeGreaterThan(0);
    }
  });
});
