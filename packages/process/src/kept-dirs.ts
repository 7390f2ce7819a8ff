import { readdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { removeTree } from "./remove-tree.ts";

/**
 * Emptied directories kept per parent for their next use: a new use renames a kept one to its
 * own name instead of making a directory, and a finished one is emptied instead of removed. On
 * the journal-less ext4 of the bench machine a directory made and removed costs ~0.05-0.5 ms of
 * mkdir and ~0.4-0.8 ms of rmdir (strace -T: an inode allocated past the recently deleted ones,
 * its block freed and discarded), where a rename costs neither. A dir is only ever renamed
 * within its own parent. The worker keeps its run dirs (services/worker run-dirs.ts) and its
 * mirrors' worktree admin dirs (packages/git linked-worktree.ts) this way; the caller's comment
 * says why no agent can write to what it keeps.
 */
export class KeptDirs {
  private readonly byParent = new Map<string, string[]>();

  /**
   * @param max at most this many kept per parent.
   * @param spared whether entry `name` of `dir` stays in it while kept (a file the same for every
   *   use, of the right content); every other entry is removed, and a kept dir holding anything
   *   else when taken is not used.
   */
  constructor(
    private readonly max: number,
    private readonly spared: (dir: string, name: string) => boolean = () => false,
  ) {}

  /**
   * Renames a kept dir of `parent` to `dest`: the spared entries it holds, or null when none was
   * left. One written to since it was kept (a stray lock file of a process that outlived its
   * use) is removed and the next one tried.
   */
  take(parent: string, dest: string): string[] | null {
    const dirs = this.keptIn(parent);
    for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
      try {
        renameSync(dir, dest);
      } catch {
        continue; // Gone meanwhile: the next one.
      }
      const names = readdirSync(dest);
      if (names.every((name) => this.spared(dest, name))) return names;
      rmSync(dest, { recursive: true, force: true });
    }
    return null;
  }

  /**
   * Empties `dir` but for its spared entries and keeps it for its parent's next use (up to
   * `max`), else removes it. A dir that is absent is fine; one that still holds more than its
   * spared entries once emptied is removed whole.
   */
  async release(dir: string): Promise<void> {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return removeTree(dir);
    }
    const spared = names.filter((name) => this.spared(dir, name));
    for (const name of names) if (!spared.includes(name)) await removeTree(path.join(dir, name));
    const dirs = this.keptIn(path.dirname(dir));
    if (dirs.length < this.max && readdirSync(dir).length === spared.length) dirs.push(dir);
    else await removeTree(dir);
  }

  /** Removes every kept dir (the service stops). */
  async dispose(): Promise<void> {
    for (const dirs of this.byParent.values()) {
      for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) await removeTree(dir);
    }
  }

  private keptIn(parent: string): string[] {
    let dirs = this.byParent.get(parent);
    if (!dirs) {
      dirs = [];
      this.byParent.set(parent, dirs);
    }
    return dirs;
  }
}
