import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { GitInputError } from "./git-error.ts";
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
 * in one step. Prune keeps a worktree whose `gitdir` names an existing `.git`.
 *
 * Mirrors whose refs or config git keeps per worktree in other ways (`extensions.refStorage`,
 * `extensions.worktreeConfig`) are left to `git worktree add` (`supportsLinkedWorktree`).
 */

/** Whether the mirror's layout is the plain one this module writes (read from its config file). */
export async function supportsLinkedWorktree(gitDir: string): Promise<boolean> {
  const config = await fs.readFile(path.join(gitDir, "config"), "utf8");
  return !/^\s*(refstorage|worktreeconfig)\s*=/im.test(config);
}

/**
 * Creates the checkout `target` (absent or an empty directory) of commit `sha`, detached, as a
 * linked worktree of the bare repository `gitDir`. Returns the admin directory. On failure
 * nothing is left: neither the admin directory nor a checkout it created.
 */
export async function addLinkedWorktree(
  gitDir: string,
  target: string,
  sha: string,
  timeoutMs: number,
): Promise<string> {
  const created = await makeEmptyDir(target);
  const id = `${path
    .basename(target)
    .replace(/[^A-Za-z0-9_-]/g, "-")
    .slice(0, 64)}-${randomBytes(4).toString("hex")}`;
  const admin = path.join(gitDir, "worktrees", id);
  const staging = path.join(gitDir, `.worktree-${id}`);
  let placed = false;
  try {
    await fs.writeFile(path.join(target, ".git"), `gitdir: ${admin}\n`);
    await fs.mkdir(staging);
    await fs.writeFile(path.join(staging, "gitdir"), `${path.join(target, ".git")}\n`);
    await fs.writeFile(path.join(staging, "commondir"), "../..\n");
    await fs.writeFile(path.join(staging, "HEAD"), `${sha}\n`);
    await fs.mkdir(path.join(gitDir, "worktrees"), { recursive: true });
    await fs.rename(staging, admin);
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
    if (created) await fs.rm(target, { recursive: true, force: true });
    else await fs.rm(path.join(target, ".git"), { force: true });
    throw error;
  }
}

/** Makes `dir` (and its parents); true when it did not exist. An existing non-empty directory is refused. */
async function makeEmptyDir(dir: string): Promise<boolean> {
  await fs.mkdir(path.dirname(dir), { recursive: true });
  try {
    await fs.mkdir(dir);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const entries = await fs.readdir(dir);
  if (entries.length > 0) throw new GitInputError("path", `${dir} already exists and is not empty`);
  return false;
}
