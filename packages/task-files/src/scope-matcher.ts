import path from "node:path";
import type { ConfigIssue } from "@overseer/input-errors";
import { ConfigError, describeReceived } from "@overseer/input-errors";
import picomatch from "picomatch";
import { findGlobProblem, normalizeGlob, SCOPE_GLOB_EXPECTED, SCOPE_GLOB_OPTIONS } from "./glob-validator.ts";

/**
 * Workflow metadata every run may write whatever its task scope (docs/state-machine.md rule 10). The
 * matcher always adds these, so no caller can forget them.
 */
export const ALWAYS_EXEMPT_GLOBS: readonly string[] = Object.freeze([".overseer/**"]);

/**
 * Returns `(path) => boolean`: true when a changed path is allowed, i.e. matches a scope glob,
 * an exempt glob or `ALWAYS_EXEMPT_GLOBS`. Paths are posix and relative to the checkout root
 * (as `git diff --name-only` prints them); a leading `./` is ignored; absolute paths and
 * paths that climb out with `..` are never allowed.
 *
 * Throws `ConfigError` listing every invalid glob (see `findGlobProblem`).
 */
export function createScopeMatcher(
  globs: readonly string[],
  exemptGlobs: readonly string[] = [],
): (path: string) => boolean {
  const issues: ConfigIssue[] = [];
  const check = (list: readonly string[], name: string) =>
    list.forEach((glob, i) => {
      const problem = typeof glob === "string" ? findGlobProblem(glob) : "is not a string";
      if (problem)
        issues.push({
          path: `${name}[${i}]`,
          expected: SCOPE_GLOB_EXPECTED,
          received: `${describeReceived(glob)}, which ${problem}`,
        });
    });
  check(globs, "scope");
  check(exemptGlobs, "exempt");
  if (issues.length > 0) throw new ConfigError("scope globs", issues);

  const all = [...globs, ...exemptGlobs, ...ALWAYS_EXEMPT_GLOBS].map(normalizeGlob);
  const isMatch = picomatch(all, SCOPE_GLOB_OPTIONS);
  return (changed) => {
    const normalized = normalizeChangedPath(changed);
    return normalized !== undefined && isMatch(normalized);
  };
}

function normalizeChangedPath(changed: string): string | undefined {
  if (changed === "" || changed.includes("\0")) return undefined;
  if (changed.startsWith("/")) return undefined;
  const normalized = path.posix.normalize(changed);
  if (normalized === "." || normalized === ".." || normalized.startsWith("../")) return undefined;
  return normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}
