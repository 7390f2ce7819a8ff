import os from "node:os";
import { runGit } from "./run-git.ts";

/** The installed git's version, asked once per process (one process). */
let cached: Promise<[number, number, number]> | null = null;

export function gitVersion(): Promise<[number, number, number]> {
  cached ??= runGit(["version"], { cwd: os.tmpdir() }).then((result) => {
    const match = /(\d+)\.(\d+)\.(\d+)/.exec(result.stdout);
    if (!match) throw new Error(`cannot read the git version from ${JSON.stringify(result.stdout.trim())}`);
    return [Number(match[1]), Number(match[2]), Number(match[3])] as [number, number, number];
  });
  cached.catch(() => {
    cached = null;
  });
  return cached;
}

/** `git merge-tree --write-tree` (a merge with no checkout) exists from git 2.38. */
export async function hasMergeTreeWriteTree(): Promise<boolean> {
  const [major, minor] = await gitVersion();
  return major > 2 || (major === 2 && minor >= 38);
}
