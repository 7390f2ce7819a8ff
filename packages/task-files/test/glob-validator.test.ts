import { describe, expect, it } from "vitest";
import { findGlobProblem } from "../src/index.ts";

describe("scope globs with an unclosed [", () => {
  it("refuses an unclosed [, accepts balanced and escaped ones", () => {
    expect(findGlobProblem("[[[")).toContain("unclosed [");
    expect(findGlobProblem("src/[a")).toContain("unclosed [");
    expect(findGlobProblem("src/[a-z]/*.{ts,js}")).toBeUndefined();
    expect(findGlobProblem("src/\\[x")).toBeUndefined();
  });
});
