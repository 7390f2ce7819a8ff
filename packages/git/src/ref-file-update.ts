import fs from "node:fs";
import path from "node:path";
import { readLoose, readPacked } from "./ref-files.ts";

/**
 * A compare-and-swap of one ref in git's "files" ref backend (gitrepository-layout), the way
 * git's own update does it, without a git process:
 *
 *   1. take the ref's lock, `<ref>.lock`, created exclusively (a git process updating the ref
 *      meanwhile holds it, and every writer of the ref takes it, `pack-refs` included);
 *   2. under the lock, read the ref's value: its loose file, else its line in `packed-refs`;
 *   3. if it is the expected one, write the new value into the lock file and rename it over the
 *      ref, which replaces the ref in one step; otherwise drop the lock.
 *
 * Returns null, for the caller to ask git, whenever git might do something else: the lock is
 * held (git waits for it a while), the ref or a name on its way is something other than a plain
 * value (a symbolic ref, a symlink, a file where a directory should be or the reverse, in the loose files or
 * in `packed-refs`), or `packed-refs` holds a line this does not read. The caller has checked
 * that the repository keeps its refs in files (no `extensions.refStorage`) and that no reflog is
 * due (git would append one).
 */
export type RefUpdate = { ok: true } | { ok: false; actualSha: string | null };

/** `expected`: the value the ref must have (null: must not exist), or "any" to set it whatever it is. */
export function updateRefFile(
  gitDir: string,
  ref: string,
  sha: string,
  expected: string | null | "any",
): RefUpdate | null {
  const parts = ref.split("/");
  const file = path.join(gitDir, ...parts);
  for (let i = 2; i < parts.length; i++) {
    const stat = fs.lstatSync(path.join(gitDir, ...parts.slice(0, i)), { throwIfNoEntry: false });
    if (stat !== undefined && !stat.isDirectory()) return null;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const lock = `${file}.lock`;
  let fd: number;
  try {
    fd = fs.openSync(lock, "wx", 0o666);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return null;
    throw error;
  }
  let renamed = false;
  try {
    const actual = currentValue(gitDir, ref, file);
    if (actual === undefined) return null;
    if (expected !== "any" && actual !== expected) return { ok: false, actualSha: actual };
    fs.writeSync(fd, `${sha}\n`);
    fs.closeSync(fd);
    fd = -1;
    fs.renameSync(lock, file);
    renamed = true;
    return { ok: true };
  } finally {
    if (fd >= 0) fs.closeSync(fd);
    if (!renamed) fs.rmSync(lock, { force: true });
  }
}

/** The ref's value (null: none), or undefined when it is not a plain one (see updateRefFile). */
function currentValue(gitDir: string, ref: string, file: string): string | null | undefined {
  // A directory, or a symlink (git reads one that points into refs/ as a symbolic ref).
  const stat = fs.lstatSync(file, { throwIfNoEntry: false });
  if (stat !== undefined && !stat.isFile()) return undefined;
  const loose = readLoose(file);
  if (loose === null) return undefined;
  const packed = readPacked(path.join(gitDir, "packed-refs"));
  if (packed === null) return undefined;
  const below = `${ref}/`;
  for (const name of packed.keys()) {
    // A packed ref on the way to this one, or below it: git refuses the name (a D/F conflict).
    if (name.startsWith(below) || ref.startsWith(`${name}/`)) return undefined;
  }
  return loose ?? packed.get(ref) ?? null;
}
