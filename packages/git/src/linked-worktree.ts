import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
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
 * The admin directory is staged while the checkout directory and its `.git` file are made
 * (independent writes, at once), and renamed into `worktrees/` only once both are complete.
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
  const staged = stageAdmin(staging, target, sha);
  staged.catch(() => undefined);
  /** Whether `target` was created here (undefined: not known to be ours, left alone). */
  let created: boolean | undefined;
  let placed = false;
  try {
    created = await makeEmptyDir(target);
    await fs.writeFile(path.join(target, ".git"), `gitdir: ${admin}\n`);
    await staged;
    await placeAdmin(gitDir, staging, admin);
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
    await staged.catch(() => undefined);
    await fs.rm(placed ? admin : staging, { recursive: true, force: true });
    if (created === true) await fs.rm(target, { recursive: true, force: true });
    else if (created === false) await fs.rm(path.join(target, ".git"), { force: true });
    throw error;
  }
}

/** The admin directory's files in `staging` (outside `worktrees/`, where prune never looks). */
async function stageAdmin(staging: string, target: string, sha: string): Promise<void> {
  await fs.mkdir(staging);
  await Promise.all([
    fs.writeFile(path.join(staging, "gitdir"), `${path.join(target, ".git")}\n`),
    fs.writeFile(path.join(staging, "commondir"), "../..\n"),
    fs.writeFile(path.join(staging, "HEAD"), `${sha}\n`),
  ]);
}

/**
 * Renames the staged admin directory into `worktrees/`. A prune removes `worktrees/` when it is
 * empty, possibly between its making and this rename: it is made again, a few times at most
 * (each rename that succeeds leaves it non-empty, so prunes stop removing it).
 */
async function placeAdmin(gitDir: string, staging: string, admin: string): Promise<void> {
  const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT";
  for (let attempt = 1; ; attempt++) {
    try {
      await fs.rename(staging, admin);
      return;
    } catch (error) {
      if (!missing(error) || attempt >= 10) throw error;
    }
    // A recursive mkdir that finds the directory, then loses it to a prune, says ENOENT too.
    await fs.mkdir(path.join(gitDir, "worktrees"), { recursive: true }).catch((error: unknown) => {
      if (!missing(error)) throw error;
    });
  }
}

/**
 * Makes `dir` (and, when missing, its parents); true when it did not exist. An existing
 * non-empty directory is refused.
 */
async function makeEmptyDir(dir: string): Promise<boolean> {
  try {
    await fs.mkdir(dir);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      await fs.mkdir(path.dirname(dir), { recursive: true });
      return makeEmptyDir(dir);
    }
    if (code !== "EEXIST") throw error;
  }
  const entries = await fs.readdir(dir);
  if (entries.length > 0) throw new GitInputError("path", `${dir} already exists and is not empty`);
  return false;
}
