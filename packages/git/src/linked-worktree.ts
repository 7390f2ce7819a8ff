import { randomBytes } from "node:crypto";
import { promises as fs, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { KeptDirs, removeTree } from "@overseer/process";
import { GitInputError } from "./git-error.ts";
import type { MirrorLayout } from "./mirror-layout.ts";
import { runGit } from "./run-git.ts";

/**
 * A detached linked worktree of a bare mirror in one git process.
 *
 * `git worktree add --detach` costs three processes: itself, then `update-ref HEAD` and
 * `reset --hard` as children. What it leaves is documented (gitrepository-layout, "worktrees"):
 * an admin directory `<mirror>/worktrees/<id>/` holding `gitdir` (the checkout's `.git` file,
 * absolute), `commondir` (`../..`) and `HEAD`, and in the checkout a `.git` file `gitdir: <admin>`.
 * Those are written here directly, then one `read-tree -u --reset <sha>^{commit}` fills the
 * index and the files, as `reset --hard` does (same unpack, same attributes, the usual
 * hardening). `<sha>^{commit}` makes git refuse anything that is not a commit the mirror has.
 *
 * Order, so `git worktree prune` (ours, or a gc's) never sees a half-made worktree: the
 * checkout's `.git` file first, then the admin directory, complete, renamed into `worktrees/`
 * in one step. Prune keeps a worktree whose `gitdir` names an existing `.git`. So making one
 * needs no lock against a prune (ours or anyone's), nor against another worktree being made.
 *
 * Mirrors whose refs or config git keeps per worktree in other ways (`extensions.refStorage`,
 * `extensions.worktreeConfig`) are left to `git worktree add` (`supportsLinkedWorktree`).
 */

/** Whether the mirror's layout (mirror-layout.ts) is the plain one this module writes. */
export function supportsLinkedWorktree(layout: MirrorLayout): boolean {
  return !layout.refStorage && !layout.worktreeConfig;
}

/**
 * Creates the checkout `target` (absent or an empty directory) of commit `sha`, detached, as a
 * linked worktree of the bare repository `gitDir`. Returns the admin directory. On failure
 * nothing is left: neither the admin directory nor a checkout it created.
 *
 * The checkout directory and its `.git` file are made, then the admin directory is staged and
 * renamed into `worktrees/` once both are complete.
 */
export async function addLinkedWorktree(
  gitDir: string,
  target: string,
  sha: string,
  timeoutMs: number,
): Promise<string> {
  const id = `${path
    .basename(target)
    .replace(/[^A-Za-z0-9_-]/g, "-")
    .slice(0, 64)}-${randomBytes(4).toString("hex")}`;
  const admin = path.join(gitDir, "worktrees", id);
  const staging = path.join(gitDir, `.worktree-${id}`);
  /** Whether `target` was created here (undefined: not known to be ours, left alone). */
  let created: boolean | undefined;
  let placed = false;
  try {
    created = makeEmptyDir(target);
    writeFileSync(path.join(target, ".git"), `gitdir: ${admin}\n`);
    stageAdmin(gitDir, staging, target, sha);
    placeAdmin(gitDir, staging, admin);
    placed = true;
    await runGit(
      [
        "-c",
        "maintenance.auto=false",
        "-c",
        "gc.auto=0",
        "--git-dir",
        admin,
        "--work-tree",
        target,
        "read-tree",
        "-u",
        "--reset",
        "--end-of-options",
        `${sha}^{commit}`,
      ],
      { cwd: target, timeoutMs },
    );
    return admin;
  } catch (error) {
    await fs.rm(placed ? admin : staging, { recursive: true, force: true });
    if (created === true) await fs.rm(target, { recursive: true, force: true });
    else if (created === false) await fs.rm(path.join(target, ".git"), { force: true });
    throw error;
  }
}

/**
 * The admin directory's files in `staging` (outside `worktrees/`, where prune never looks).
 * These few small local writes (here, makeEmptyDir, placeAdmin and the `.git` file) are
 * synchronous: one call each, where the promise API takes a thread-pool round trip for every
 * open, write and close (~0.1 ms of the worker's CPU per file on the 2-core bench machine).
 */
function stageAdmin(gitDir: string, staging: string, target: string, sha: string): void {
  const held = keptAdmins.take(gitDir, staging);
  if (held === null) mkdirSync(staging);
  writeFileSync(path.join(staging, "gitdir"), `${path.join(target, ".git")}\n`);
  // A kept admin directory holds its `commondir` still (the same for every worktree).
  if (!held?.includes("commondir")) writeFileSync(path.join(staging, "commondir"), COMMONDIR);
  writeFileSync(path.join(staging, "HEAD"), `${sha}\n`);
}

/** What every linked worktree's `commondir` holds: the mirror, two levels up from its admin dir. */
const COMMONDIR = "../..\n";

/** Whether the admin directory `dir` holds a `commondir` file saying COMMONDIR. */
function hasCommondir(dir: string): boolean {
  try {
    return readFileSync(path.join(dir, "commondir"), "utf8") === COMMONDIR;
  } catch {
    return false;
  }
}

/**
 * Renames the staged admin directory into `worktrees/`. A prune removes `worktrees/` when it is
 * empty, possibly between its making and this rename: it is made again, a few times at most
 * (each rename that succeeds leaves it non-empty, so prunes stop removing it).
 */
function placeAdmin(gitDir: string, staging: string, admin: string): void {
  const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT";
  for (let attempt = 1; ; attempt++) {
    try {
      renameSync(staging, admin);
      return;
    } catch (error) {
      if (!missing(error) || attempt >= 10) throw error;
    }
    // A recursive mkdir that finds the directory, then loses it to a prune, says ENOENT too.
    try {
      mkdirSync(path.join(gitDir, "worktrees"), { recursive: true });
    } catch (error) {
      if (!missing(error)) throw error;
    }
  }
}

/**
 * Makes `dir` (and, when missing, its parents); true when it did not exist. An existing
 * non-empty directory is refused.
 */
function makeEmptyDir(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      mkdirSync(path.dirname(dir), { recursive: true });
      return makeEmptyDir(dir);
    }
    if (code !== "EEXIST") throw error;
  }
  const entries = readdirSync(dir);
  if (entries.length > 0) throw new GitInputError("path", `${dir} already exists and is not empty`);
  return false;
}

/**
 * Emptied admin directories kept per mirror for its next worktrees (KeptDirs, at most 8 each),
 * outside `worktrees/` (`.worktree-kept-<tag><n>`, where prune never looks): a new worktree
 * renames one to its staging name instead of making a directory, and a removed worktree's is
 * emptied instead of removed, all but its `commondir` when that says COMMONDIR (the same for
 * every worktree: one file fewer made and removed per worktree). No sandbox can change one: the
 * agent sees the mirror read-only.
 */
const keptAdmins = new KeptDirs(8, (dir, name) => name === "commondir" && hasCommondir(dir));
const KEPT_TAG = randomBytes(3).toString("hex");
let keptCount = 0;

/**
 * Takes a worktree's admin directory `admin` out of `worktrees/` in one rename (git never lists
 * a worktree whose files are half gone), empties it and keeps it for the mirror's next worktree
 * (keptAdmins), else removes it. An admin directory already gone is fine.
 */
export async function retireAdmin(gitDir: string, admin: string): Promise<void> {
  keptCount += 1;
  const parked = path.join(gitDir, `.worktree-kept-${KEPT_TAG}${keptCount.toString(36)}`);
  try {
    renameSync(admin, parked);
  } catch {
    // Absent (removed already, pruned), or not ours to move: removed where it is, as before.
    return removeTree(admin);
  }
  await keptAdmins.release(parked);
}

/** Removes the admin directories kept for next worktrees, of every mirror (the worker stops). */
export function disposeKeptAdmins(): Promise<void> {
  return keptAdmins.dispose();
}
