import { mkdirSync } from "node:fs";
import path from "node:path";
import { KeptDirs } from "@overseer/process";

/**
 * Emptied run dirs this worker keeps for its next runs (KeptDirs, at most 8 per runs/ dir): a
 * new run renames one to its own name instead of making a directory, and a finished run's dir
 * is emptied instead of removed.
 *
 * Only the run dir itself is kept: no sandbox ever sees it (the checkout and the control dir
 * inside it are bound into the sandbox, and are made and removed per run, so nothing an agent
 * did to them outlives its run). It holds only entries the worker names, and is kept only once
 * it is empty. Kept by parent (a worker's `<dataDir>/runs`): a dir is renamed within its own.
 */
const runDirs = new KeptDirs(8);

/**
 * Makes `runDir`, the run's private directory (0700, its parents made when missing): a kept
 * run dir renamed to it (when still empty), else a new one.
 */
export function makeRunDir(runDir: string): void {
  if (runDirs.take(path.dirname(runDir), runDir) === null)
    mkdirSync(runDir, { recursive: true, mode: 0o700 });
}

/**
 * Empties a finished run's dir and keeps it for a next run, else removes it. A dir that is
 * absent (a run that ended before its checkout) is fine.
 */
export function releaseRunDir(runDir: string): Promise<void> {
  return runDirs.release(runDir);
}

/** Removes the run dirs kept for next runs (the worker stops). */
export function disposeRunDirs(): Promise<void> {
  return runDirs.dispose();
}
