import { rmdirSync } from "node:fs";
import { rmdir } from "node:fs/promises";

/**
 * Removal of the per-worker cgroup parents (cgroup-limits.ts), a little after the last run left.
 *
 * Why not at once: when a run's cleanup removes the emptied parent, the next run makes it again
 * (a mkdir per hierarchy and the controllers' subtree_control write) and the kernel creates and
 * then tears down the parent's memory and pids state each time: with sequential runs that churn
 * cost ~0.5 ms of the worker's CPU per run, and more in the kernel's cgroup release work.
 * A parent empty for PARENT_LINGER_MS is removed (EBUSY, kept, while another worker's runs or a
 * new run use it), and every parent still lingering is removed when the process exits, so an
 * empty one stays behind only if the worker is killed within that window, as a run's own
 * directories stay when it is killed mid-run (the next worker's sweep and cleanup take both).
 * No limit is affected: every run still gets its own cgroup with its own limits below the parent.
 */

/** How long an emptied parent is kept for the next run. */
export const PARENT_LINGER_MS = 5_000;

const pending = new Map<string, NodeJS.Timeout>();
let exitHookInstalled = false;

/** The last run known to use `parent` has gone: removes it after PARENT_LINGER_MS unless a run is then in it. */
export function releaseParentLater(parent: string): void {
  clearTimeout(pending.get(parent));
  const timer = setTimeout(() => {
    pending.delete(parent);
    rmdir(parent).catch(() => undefined);
  }, PARENT_LINGER_MS);
  // The linger never keeps a process alive: at exit the hook below removes what is left.
  timer.unref();
  pending.set(parent, timer);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", removeLingeringParents);
}

/** Removes every lingering parent now (those in use stay: rmdir refuses a non-empty cgroup). */
export function removeLingeringParents(): void {
  for (const [parent, timer] of pending) {
    clearTimeout(timer);
    try {
      rmdirSync(parent);
    } catch {
      // In use by another worker's runs, or gone already.
    }
  }
  pending.clear();
}
