import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { removeTree } from "@overseer/process";

/**
 * Emptied run dirs this worker keeps for its next runs (at most this many): a new run renames
 * one to its own name instead of making a directory, and a finished run's dir is emptied
 * instead of removed. On the journal-less ext4 of the bench machine a directory made and removed
 * costs ~0.1-0.5 ms of mkdir and ~0.4 ms of rmdir per run (an inode allocated past the recently
 * deleted ones, its block freed and discarded), where a rename costs neither.
 *
 * Only the run dir itself is kept: no sandbox ever sees it (the checkout and the control dir
 * inside it are bound into the sandbox, and are made and removed per run, so nothing an agent
 * did to them outlives its run). It holds only entries the worker names, and is kept only once
 * it is empty. Kept by parent (a worker's `<dataDir>/runs`): a dir is renamed within its own.
 */
const KEPT_MAX = 8;
const kept = new Map<string, string[]>();

function keptIn(parent: string): string[] {
  let dirs = kept.get(parent);
  if (!dirs) {
    dirs = [];
    kept.set(parent, dirs);
  }
  return dirs;
}

/**
 * Makes `runDir`, the run's private directory (0700, its parents made when missing): a kept
 * run dir renamed to it (when still empty), else a new one.
 */
export function makeRunDir(runDir: string): void {
  const dirs = keptIn(path.dirname(runDir));
  for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
    try {
      renameSync(dir, runDir);
    } catch {
      continue; // Gone meanwhile: the next kept one, else a new one.
    }
    if (readdirSync(runDir).length === 0) return;
    // Written to since it was kept: removed, not used.
    rmSync(runDir, { recursive: true, force: true });
  }
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
}

/**
 * Empties a finished run's dir and keeps it for a next run (up to KEPT_MAX), else removes it.
 * A dir that is absent (a run that ended before its checkout) is fine; one that is not empty
 * once its entries were removed is removed whole.
 */
export async function releaseRunDir(runDir: string): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(runDir);
  } catch {
    return removeTree(runDir);
  }
  for (const name of names) await removeTree(path.join(runDir, name));
  const dirs = keptIn(path.dirname(runDir));
  if (dirs.length < KEPT_MAX && readdirSync(runDir).length === 0) dirs.push(runDir);
  else await removeTree(runDir);
}

/** Removes the run dirs kept for next runs (the worker stops). */
export async function disposeRunDirs(): Promise<void> {
  for (const dirs of kept.values()) {
    for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) await removeTree(dir);
  }
}
