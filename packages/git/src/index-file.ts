import { createHash } from "node:crypto";

/**
 * A worktree's index file (gitformat-index) read without a git process: its entries (path,
 * mode, blob id) and its cache tree (the tree id git keeps for each directory whose entries
 * are unchanged since it was last written). What the hand-in needs to write its commit's tree
 * and list the checkout's changes (index-tree.ts) without `git write-tree` and `git diff-index`,
 * each a git process (~2–3 ms of the worker host's CPU).
 *
 * Only the plain kind is read: versions 2 and 3, SHA-1, every entry at stage 0 with a blob,
 * symlink or gitlink mode, no skip-worktree or intent-to-add entry, no split or sparse index
 * (any extension git marks as required). Anything else is null, for the caller to ask git.
 * The checksum at the end is verified (unless git was told to skip it: all zeros).
 */

export interface IndexEntry {
  /**
   * Path from the checkout's root, `/`-separated, one character per byte (latin1): git's bytes
   * whatever their encoding, sorted as git sorts them.
   */
  path: string;
  /** The mode as git writes it in a tree: `100644`, `100755`, `120000` or `160000`. */
  mode: string;
  /** The blob's (or, for a gitlink, the commit's) id. */
  sha: string;
}

export interface ParsedIndex {
  entries: IndexEntry[];
  /** Directory (`""` for the root, latin1 as paths) → its tree id and how many entries it covers; valid ones only. */
  trees: Map<string, { sha: string; count: number }>;
}

/** The modes git stores for a blob, a symbolic link and a gitlink, as a tree writes them. */
const MODES = new Map<number, string>([
  [0o100644, "100644"],
  [0o100755, "100755"],
  [0o120000, "120000"],
  [0o160000, "160000"],
]);
const HEADER = 12;
const FIXED = 62;
const HASH = 20;

export function parseIndex(data: Buffer): ParsedIndex | null {
  if (data.length < HEADER + HASH || data.toString("latin1", 0, 4) !== "DIRC") return null;
  const version = data.readUInt32BE(4);
  if (version !== 2 && version !== 3) return null;
  const body = data.subarray(0, data.length - HASH);
  const trailer = data.subarray(data.length - HASH);
  if (trailer.some((byte) => byte !== 0) && !createHash("sha1").update(body).digest().equals(trailer))
    return null;
  const count = data.readUInt32BE(8);
  const entries: IndexEntry[] = [];
  let at = HEADER;
  for (let i = 0; i < count; i++) {
    if (at + FIXED > body.length) return null;
    const mode = MODES.get(data.readUInt32BE(at + 24));
    const flags = data.readUInt16BE(at + 60);
    const extended = (flags & 0x4000) !== 0;
    // Stage bits (a conflict), or v3's skip-worktree and intent-to-add: git's own rules apply.
    if (mode === undefined || (flags & 0x3000) !== 0 || (extended && data.readUInt16BE(at + 62) !== 0))
      return null;
    const start = at + FIXED + (extended ? 2 : 0);
    const end = body.indexOf(0, start);
    if (end < 0) return null;
    const sha = data.toString("hex", at + 40, at + 60);
    const name = data.toString("latin1", start, end);
    // git writes its entries sorted, each path once: anything else is not read here.
    if (entries.length > 0 && name <= (entries[entries.length - 1] as IndexEntry).path) return null;
    entries.push({ path: name, mode, sha });
    // Padded with 1 to 8 NULs to a multiple of 8 bytes from the entry's start.
    at += (end - at + 8) & ~7;
  }
  const trees = new Map<string, { sha: string; count: number }>();
  while (at + 8 <= body.length) {
    const signature = data.toString("latin1", at, at + 4);
    const size = data.readUInt32BE(at + 4);
    const start = at + 8;
    if (start + size > body.length) return null;
    // An extension git requires readers to understand (`link`, `sdir`): not the plain kind.
    if (signature.charCodeAt(0) < 0x41 || signature.charCodeAt(0) > 0x5a) return null;
    if (signature === "TREE" && !readCacheTree(data.subarray(start, start + size), trees)) return null;
    at = start + size;
  }
  return at === body.length ? { entries, trees } : null;
}

/** The `TREE` extension: directories in pre-order, each `name\0count subtrees\n[id]`. */
function readCacheTree(data: Buffer, trees: ParsedIndex["trees"]): boolean {
  let at = 0;
  const visit = (prefix: string): boolean => {
    const nul = data.indexOf(0, at);
    const newline = data.indexOf(0x0a, nul);
    if (nul < 0 || newline < 0) return false;
    const name = data.toString("latin1", at, nul);
    const [entryCount, subtreeCount] = data
      .toString("latin1", nul + 1, newline)
      .split(" ")
      .map(Number);
    if (!Number.isInteger(entryCount) || !Number.isInteger(subtreeCount)) return false;
    const dir = prefix === "" ? name : `${prefix}/${name}`;
    at = newline + 1;
    if ((entryCount as number) >= 0) {
      if (at + HASH > data.length) return false;
      trees.set(dir, { sha: data.toString("hex", at, at + HASH), count: entryCount as number });
      at += HASH;
    }
    for (let i = 0; i < (subtreeCount as number); i++) if (!visit(dir)) return false;
    return true;
  };
  return visit("") && at === data.length;
}
