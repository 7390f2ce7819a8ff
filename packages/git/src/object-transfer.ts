import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { inflateSync } from "node:zlib";
import { PackIndexes } from "./pack-index.ts";

/**
 * The objects a local remote lacks to hold `tip` whole, copied into it from the mirror's loose
 * store, without a git process: what `git push`'s pack-objects, unpack-objects and the
 * connectivity check of receive-pack do for a local remote, for the usual push of a few new
 * objects (local-push.ts).
 *
 * The walk starts at `tip` and descends (a commit to its tree and parents, a tree to its
 * entries, gitlinks excepted, a tag to its object) only through objects the remote does not
 * have, loose or packed (pack-index.ts). It stops at an object the remote has: git keeps every
 * object's closure with it (a push lands in quarantine until it is checked whole, a fetch is
 * checked before its refs move, and gc keeps whatever recent unreachable objects reach), and this
 * copy keeps that rule too: objects are linked into the remote children first, so an object
 * there always has its closure there, even when a copy is cut short.
 *
 * A copy is a hard link to the mirror's file (git's `clone --local` does the same; loose
 * objects are read-only and never rewritten), or a copy where the two do not share a file
 * system. Either appears at its final name at once, so a reader never sees half an object.
 *
 * Returns null, for the caller to push with git, when the walk meets an object that the remote
 * lacks and the mirror does not hold loose (a packed one, which this does not read), an object
 * it cannot read or whose content does not hash to its id, a pack index it cannot read, or more
 * than `maxObjects` objects to copy.
 */
export interface ObjectTransfer {
  /** The objects linked into the remote, children first. */
  copied: string[];
}

export function transferObjects(
  mirrorDir: string,
  remoteDir: string,
  tip: string,
  maxObjects: number,
): ObjectTransfer | null {
  const packs = new PackIndexes(remoteDir);
  try {
    const missing = missingObjects(mirrorDir, remoteDir, tip, packs, maxObjects);
    if (missing === null) return null;
    for (const sha of missing) linkObject(mirrorDir, remoteDir, sha);
    return { copied: missing };
  } finally {
    packs.close();
  }
}

/** The objects to copy, children before parents; null when they cannot all be read (above). */
function missingObjects(
  mirrorDir: string,
  remoteDir: string,
  tip: string,
  packs: PackIndexes,
  maxObjects: number,
): string[] | null {
  const order: string[] = [];
  const seen = new Set<string>();
  // Depth first, post-order: an entry is [id, children] once read, [id] before.
  const stack: [string, string[]?][] = [[tip]];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as [string, string[]?];
    const [sha, children] = top;
    if (children === undefined) {
      if (seen.has(sha)) {
        stack.pop();
        continue;
      }
      seen.add(sha);
      const present = remoteHas(remoteDir, sha, packs);
      if (present === null) return null;
      if (present) {
        stack.pop();
        continue;
      }
      const read = readLinks(mirrorDir, sha);
      if (read === null) return null;
      top[1] = read;
      for (const child of read) if (!seen.has(child)) stack.push([child]);
      continue;
    }
    stack.pop();
    order.push(sha);
    if (order.length > maxObjects) return null;
  }
  return order;
}

function looseFile(gitDir: string, sha: string): string {
  return path.join(gitDir, "objects", sha.slice(0, 2), sha.slice(2));
}

function remoteHas(remoteDir: string, sha: string, packs: PackIndexes): boolean | null {
  if (fs.existsSync(looseFile(remoteDir, sha))) return true;
  return packs.has(sha);
}

/** The ids a loose object of the mirror names (none for a blob); null: not loose, or unreadable. */
function readLinks(mirrorDir: string, sha: string): string[] | null {
  let deflated: Buffer;
  try {
    deflated = fs.readFileSync(looseFile(mirrorDir, sha));
  } catch {
    return null;
  }
  try {
    // Read whole and hashed, blobs too: what lands in the remote is exactly the object its name
    // says (git's index-pack names what a push sends by its hash), never a torn or wrong file.
    const raw = inflateSync(deflated);
    if (createHash("sha1").update(raw).digest("hex") !== sha) return null;
    const nul = raw.indexOf(0);
    const space = raw.indexOf(0x20);
    const type = raw.toString("latin1", 0, space);
    if (nul < 0 || space > nul || raw.toString("latin1", 0, nul) !== `${type} ${raw.length - nul - 1}`) {
      return null;
    }
    if (type === "blob") return [];
    const body = raw.subarray(nul + 1);
    if (type === "tree") return treeLinks(body);
    if (type === "commit" || type === "tag") return headerLinks(body, type);
    return null;
  } catch {
    return null;
  }
}

/** A tree's entries (`<mode> <name>\0<20-byte id>`) but gitlinks (mode 160000, another repository's commit). */
function treeLinks(body: Buffer): string[] | null {
  const links: string[] = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const nul = body.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > body.length) return null;
    if (body.toString("latin1", at, space) !== "160000") links.push(body.toString("hex", nul + 1, nul + 21));
    at = nul + 21;
  }
  return links;
}

const HEADER_LINK = /^(tree|parent|object) ([0-9a-f]{40})$/;

/** A commit's tree and parents, or a tag's object, from the headers before the first blank line. */
function headerLinks(body: Buffer, type: "commit" | "tag"): string[] | null {
  const text = body.toString("latin1");
  const end = text.indexOf("\n\n");
  const links: string[] = [];
  for (const line of text.slice(0, end < 0 ? text.length : end).split("\n")) {
    const link = HEADER_LINK.exec(line);
    if (link === null) continue;
    if ((link[1] === "object") !== (type === "tag")) return null;
    links.push(link[2] as string);
  }
  return links.length > 0 ? links : null;
}

/** Links (or copies) one loose object into the remote; an object already there is left as it is. */
function linkObject(mirrorDir: string, remoteDir: string, sha: string): void {
  const source = looseFile(mirrorDir, sha);
  const target = looseFile(remoteDir, sha);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  // Fresh, as git writes or freshens an object it receives: a gc of the remote spares
  // unreachable objects younger than its grace period, and these are unreachable until the
  // branch moves. A hard link would otherwise bring in the mirror file's old mtime.
  const now = new Date();
  fs.utimesSync(source, now, now);
  try {
    fs.linkSync(source, target);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      fs.utimesSync(target, now, now);
      return;
    }
    if (code !== "EXDEV" && code !== "EPERM" && code !== "EMLINK") throw error;
  }
  const temporary = path.join(path.dirname(target), `tmp_obj_${randomBytes(6).toString("hex")}`);
  fs.copyFileSync(source, temporary);
  try {
    fs.linkSync(temporary, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}
