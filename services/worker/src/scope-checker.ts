import path from "node:path";
import type { ChangedPath } from "@overseer/git";
import { createScopeMatcher } from "@overseer/task-files";

/**
 * docs/state-machine.md rule 10: every changed, added, deleted and renamed path (both sides of a rename),
 * mode changes and symlinks included, must match the task scope unless it is workflow
 * metadata. A symlink whose target leaves the checkout is a violation wherever it lives,
 * even inside the scope: it would let later host-side tools read or write outside.
 */
export function scopeViolations(
  changes: readonly ChangedPath[],
  scope: readonly string[],
  exemptGlobs: readonly string[],
): string[] {
  const allowed = createScopeMatcher([...scope], [...exemptGlobs]);
  const violations = new Set<string>();
  for (const change of changes) {
    for (const p of [change.path, change.oldPath]) {
      if (p !== undefined && !allowed(p)) violations.add(p);
    }
    if (
      change.isSymlink &&
      change.symlinkTarget !== undefined &&
      linkLeavesCheckout(change.path, change.symlinkTarget)
    ) {
      violations.add(`${change.path} -> ${change.symlinkTarget} (symlink out of the checkout)`);
    }
    if (change.isSubmodule) violations.add(`${change.path} (embedded repository)`);
  }
  return [...violations].sort();
}

function linkLeavesCheckout(linkPath: string, target: string): boolean {
  if (path.posix.isAbsolute(target)) return true;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(linkPath), target));
  return resolved === ".." || resolved.startsWith("../");
}
