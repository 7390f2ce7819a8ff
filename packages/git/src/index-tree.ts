import { createHash } from "node:crypto";
import type { RawChange } from "./changed-paths-parser.ts";
import type { IndexEntry, ParsedIndex } from "./index-file.ts";
import { writeLooseObject } from "./loose-commit.ts";

/**
 * What `git write-tree` and `git diff-index --cached --raw` (without rename detection) make of
 * a worktree's index, computed from the parsed index (index-file.ts) without a git process.
 */

/**
 * Writes the index's tree into the loose object store of `gitDir` (plainObjectStore checked by
 * the caller) as `git write-tree` does, and returns its id. A directory the cache tree still
 * holds (unchanged since git last wrote the index) is its recorded id, as git takes it; every
 * other one is written as a tree object, sorted as git sorts (a directory as its name and `/`,
 * which is the index's bytewise order of the paths under it).
 */
export function writeIndexTree(gitDir: string, index: ParsedIndex): string {
  const root = index.trees.get("");
  if (root !== undefined && root.count === index.entries.length) return root.sha;
  return buildTree(index, (body) => writeLooseObject(gitDir, "tree", body));
}

/**
 * The id of the tree the index's entries make, every directory hashed from them (no cache tree
 * taken, nothing written). Equal to the index's recorded root tree only when the entries are
 * exactly that tree: a checkout of a damaged tree (entries out of order, a name twice, a mode
 * git reads as another) gives an index that is not, which `git diff-index <base>` compares
 * against the tree itself (worktree-index.ts).
 */
export function indexTreeId(index: ParsedIndex): string {
  const hash = (body: Buffer) =>
    createHash("sha1").update(`tree ${body.length}\0`).update(body).digest("hex");
  return buildTree({ entries: index.entries, trees: new Map() }, hash);
}

/** The trees of the index's entries, each stored by `store` (which returns its id), root last. */
function buildTree(index: ParsedIndex, store: (body: Buffer) => string): string {
  const { entries, trees } = index;
  let i = 0;
  const build = (prefix: string): string => {
    const parts: Buffer[] = [];
    for (let entry = entries[i]; entry?.path.startsWith(prefix); entry = entries[i]) {
      const rest = entry.path.slice(prefix.length);
      const slash = rest.indexOf("/");
      if (slash < 0) {
        parts.push(treeEntry(entry.mode, rest, entry.sha));
        i++;
        continue;
      }
      const name = rest.slice(0, slash);
      const dir = `${prefix}${name}`;
      const cached = trees.get(dir);
      let sha: string;
      if (cached !== undefined && covers(entries, `${dir}/`, i, cached.count)) {
        sha = cached.sha;
        i += cached.count;
      } else {
        sha = build(`${dir}/`);
      }
      parts.push(treeEntry("40000", name, sha));
    }
    return store(Buffer.concat(parts));
  };
  return build("");
}

/** Whether exactly `count` entries from `start` lie under `prefix` (a cache tree node's span). */
function covers(entries: readonly IndexEntry[], prefix: string, start: number, count: number): boolean {
  const last = entries[start + count - 1];
  const next = entries[start + count];
  return count > 0 && last !== undefined && last.path.startsWith(prefix) && !next?.path.startsWith(prefix);
}

/** `<mode> <name>\0<20-byte id>`; the name's characters are its bytes (latin1). */
function treeEntry(mode: string, name: string, sha: string): Buffer {
  return Buffer.concat([Buffer.from(`${mode} ${name}\0`, "latin1"), Buffer.from(sha, "hex")]);
}

/** Regular files (either mode), symbolic links and gitlinks are the types git tells apart. */
const typeOf = (mode: string) => (mode.startsWith("100") ? "file" : mode);

/**
 * The changes from `base` to `index`, as `git diff-index --cached --raw` lists them without
 * `-M`: additions, deletions, modifications (content or executable bit) and type changes, by
 * path in git's order. A rename is its deletion and its addition. Paths are decoded as UTF-8,
 * as git's output is read.
 */
export function indexChanges(base: ParsedIndex, index: ParsedIndex): RawChange[] {
  const changes: RawChange[] = [];
  const before = base.entries;
  const after = index.entries;
  const utf8 = (name: string) => Buffer.from(name, "latin1").toString("utf8");
  let b = 0;
  let a = 0;
  while (b < before.length || a < after.length) {
    const old = before[b];
    const now = after[a];
    if (now === undefined || (old !== undefined && old.path < now.path)) {
      const gone = old as IndexEntry;
      changes.push({ path: utf8(gone.path), status: "deleted", oldMode: gone.mode, newMode: "000000" });
      b++;
    } else if (old === undefined || now.path < old.path) {
      changes.push({ path: utf8(now.path), status: "added", oldMode: "000000", newMode: now.mode });
      a++;
    } else {
      if (old.mode !== now.mode || old.sha !== now.sha) {
        const status = typeOf(old.mode) === typeOf(now.mode) ? "modified" : "typechange";
        changes.push({ path: utf8(now.path), status, oldMode: old.mode, newMode: now.mode });
      }
      b++;
      a++;
    }
  }
  return changes;
}
