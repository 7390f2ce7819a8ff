import { ConfigError } from "@overseer/input-errors";
import { describe, expect, it } from "vitest";
import { ALWAYS_EXEMPT_GLOBS, createScopeMatcher, findGlobProblem } from "../src/index.ts";

describe("createScopeMatcher", () => {
  it("** allows every path, dotfiles and nested ones included", () => {
    const allowed = createScopeMatcher(["**"]);
    for (const p of ["README.md", ".env", ".github/workflows/ci.yml", "a/b/c/.hidden/d.ts", "deep/.x/y"]) {
      expect(allowed(p), p).toBe(true);
    }
  });

  it("dir/** covers everything under dir, at any depth, dotfiles included", () => {
    const allowed = createScopeMatcher(["src/**"]);
    expect(allowed("src/a.ts")).toBe(true);
    expect(allowed("src/a/b/c.ts")).toBe(true);
    expect(allowed("src/.env")).toBe(true);
    expect(allowed("src/.config/x.json")).toBe(true);
    expect(allowed("srcx/a.ts")).toBe(false);
    expect(allowed("lib/src/a.ts")).toBe(false);
    expect(allowed("README.md")).toBe(false);
  });

  it("* stays inside one directory; **/ crosses them", () => {
    const top = createScopeMatcher(["*.md"]);
    expect(top("README.md")).toBe(true);
    expect(top(".hidden.md")).toBe(true);
    expect(top("docs/guide.md")).toBe(false);
    const any = createScopeMatcher(["**/*.md"]);
    expect(any("README.md")).toBe(true);
    expect(any("docs/deep/guide.md")).toBe(true);
    expect(any("docs/guide.txt")).toBe(false);
  });

  it("supports braces, character classes and exact files", () => {
    const allowed = createScopeMatcher(["{api,web}/**", "test/case-[0-9].ts", "package.json"]);
    expect(allowed("api/x.ts")).toBe(true);
    expect(allowed("web/y/z.ts")).toBe(true);
    expect(allowed("cli/x.ts")).toBe(false);
    expect(allowed("test/case-3.ts")).toBe(true);
    expect(allowed("test/case-x.ts")).toBe(false);
    expect(allowed("package.json")).toBe(true);
    expect(allowed("packages/a/package.json")).toBe(false);
  });

  it("is case-sensitive", () => {
    expect(createScopeMatcher(["docs/**"])("Docs/a.md")).toBe(false);
  });

  it("treats a trailing slash as the whole directory", () => {
    const allowed = createScopeMatcher(["docs/"]);
    expect(allowed("docs/a.md")).toBe(true);
    expect(allowed("docs/x/y.md")).toBe(true);
    expect(allowed("docsy.md")).toBe(false);
  });

  it("always exempts .overseer/**, plus the given exempt globs", () => {
    expect(ALWAYS_EXEMPT_GLOBS).toEqual([".overseer/**"]);
    const allowed = createScopeMatcher(["src/**"], ["dist/**", "*.lock"]);
    expect(allowed(".overseer/handoff.md")).toBe(true);
    expect(allowed(".overseer/runs/x/run.json")).toBe(true);
    expect(allowed("dist/bundle.js")).toBe(true);
    expect(allowed("yarn.lock")).toBe(true);
    expect(allowed(".overseerx/a")).toBe(false);
    expect(allowed("lib/a.ts")).toBe(false);
    expect(createScopeMatcher(["src/**"], [])(".overseer/notes.md")).toBe(true);
  });

  it("normalizes ./ and refuses paths outside the checkout", () => {
    const allowed = createScopeMatcher(["**"]);
    expect(allowed("./src/a.ts")).toBe(true);
    expect(allowed("src//a.ts")).toBe(true);
    expect(allowed("../outside.txt")).toBe(false);
    expect(allowed("src/../../outside.txt")).toBe(false);
    expect(allowed("/etc/passwd")).toBe(false);
    expect(allowed("")).toBe(false);
    expect(allowed(".")).toBe(false);
  });

  it("resolves .. inside the checkout before matching", () => {
    const allowed = createScopeMatcher(["src/**"]);
    expect(allowed("src/a/../b.ts")).toBe(true);
    expect(allowed("src/../lib/b.ts")).toBe(false);
  });

  it("an empty scope allows only exempt paths", () => {
    const allowed = createScopeMatcher([]);
    expect(allowed("src/a.ts")).toBe(false);
    expect(allowed(".overseer/x")).toBe(true);
  });

  it("throws a ConfigError listing every bad glob", () => {
    let error: unknown;
    try {
      createScopeMatcher(["ok/**", "/abs/**", "a/../b", "!src/**"], ["", "bad\u0000"]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues;
    expect(issues.map((i) => i.path)).toEqual(["scope[1]", "scope[2]", "scope[3]", "exempt[0]", "exempt[1]"]);
    expect(issues[0]?.received).toContain("which is absolute");
  });
});

describe("findGlobProblem", () => {
  it("accepts ordinary globs", () => {
    for (const g of [
      "**",
      "src/**",
      "*.md",
      "./src/**",
      ".github/**",
      "a/**/b/*.{ts,tsx}",
      "docs/",
      "file[1].txt",
    ]) {
      expect(findGlobProblem(g), g).toBeUndefined();
    }
  });

  it.each([
    ["", "is empty"],
    ["   ", "is empty"],
    ["/etc/**", "is absolute"],
    ["C:\\repo\\**", "is absolute"],
    ["~/x", "is absolute"],
    ["..", "has a .. segment"],
    ["a/../b", "has a .. segment"],
    ["../**", "has a .. segment"],
    ["a\nb", "contains control characters"],
    ["a\u0000", "contains control characters"],
    ["a\u007f", "contains control characters"],
    [" src/**", "has leading or trailing whitespace"],
    ["!src/**", "is negated"],
    ["a{", "cannot be compiled"],
  ])("%j %s", (glob, problem) => {
    expect(findGlobProblem(glob)).toContain(problem);
  });
});
