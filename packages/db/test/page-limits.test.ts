import { describe, expect, it } from "vitest";
import { LEASE_DEFAULTS, PAGE_LIMITS, resolvePageLimit } from "../src/index.ts";

describe("resolvePageLimit", () => {
  it("uses each listing's default page size when none is asked for", () => {
    expect(resolvePageLimit(undefined, PAGE_LIMITS.runs)).toBe(100);
    expect(resolvePageLimit(undefined, PAGE_LIMITS.events)).toBe(200);
    expect(resolvePageLimit(undefined, PAGE_LIMITS.tasks)).toBe(500);
  });

  it("keeps a requested size inside [1, max] and clamps one outside", () => {
    expect(resolvePageLimit(42, PAGE_LIMITS.runs)).toBe(42);
    expect(resolvePageLimit(0, PAGE_LIMITS.runs)).toBe(1);
    expect(resolvePageLimit(501, PAGE_LIMITS.runs)).toBe(500);
    expect(resolvePageLimit(5_000, PAGE_LIMITS.events)).toBe(1000);
    expect(resolvePageLimit(5_000, PAGE_LIMITS.tasks)).toBe(1000);
  });

  it("freezes the defaults", () => {
    expect(Object.isFrozen(PAGE_LIMITS)).toBe(true);
    expect(Object.isFrozen(PAGE_LIMITS.runs)).toBe(true);
    expect(Object.isFrozen(LEASE_DEFAULTS)).toBe(true);
    expect(LEASE_DEFAULTS.maxProjects).toBe(2_147_483_647);
  });
});
