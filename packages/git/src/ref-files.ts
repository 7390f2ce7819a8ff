import fs from "node:fs";
import path from "node:path";
import { type MirrorLayout, readMirrorLayout } from "./mirror-layout.ts";

/**
 * Branch heads read from a bare repository's ref files, as git's "files" ref backend keeps them
 * (gitrepository-layout: `refs/heads/<name>`, then `packed-refs`), without a git process.
 *
 * A loose ref file wins over `packed-refs`; each is replaced whole by git (a lock file renamed
 * over it), so a read sees one version or the other. Loose files are read before
 * `packed-refs`, as git does: `pack-refs` writes `packed-refs` before it deletes the loose
 * files, so a ref being packed is found in one or the other.
 *
 * Returns null, for the caller to ask git, whenever the layout is not that plain one: another
 * ref backend (`extensions.refStorage`), a symbolic ref, a file that does not hold an object id.
 * `layout` is the mirror's (mirror-layout.ts), read here when not given; throws when the config
 * cannot be read (no repository there).
 */
export async function branchHeadsFromFiles(
  gitDir: string,
  names: readonly string[],
  layout: Promise<MirrorLayout> = readMirrorLayout(gitDir),
): Promise<Map<string, string | null> | null> {
  const [{ refStorage }, loose] = await Promise.all([layout, readLooseRefs(gitDir, names)]);
  if (refStorage) return null;
  const heads = new Map<string, string | null>();
  const unpacked: string[] = [];
  for (const [i, name] of names.entries()) {
    const content = loose[i];
    if (content === undefined) unpacked.push(name);
    else if (content === null) return null;
    else heads.set(name, content);
  }
  if (unpacked.length > 0) {
    const packed = readPacked(path.join(gitDir, "packed-refs"));
    if (packed === null) return null;
    for (const name of unpacked) heads.set(name, packed.get(`refs/heads/${name}`) ?? null);
  }
  return new Map(names.map((name) => [name, heads.get(name) ?? null]));
}

/** Each name's loose ref (readLoose); async so that a failed read rejects beside `layout`. */
async function readLooseRefs(
  gitDir: string,
  names: readonly string[],
): Promise<(string | null | undefined)[]> {
  return names.map((name) => readLoose(path.join(gitDir, "refs", "heads", ...name.split("/"))));
}

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * A loose ref's object id; undefined: no such file; null: not a plain object id (a symbolic ref).
 * Synchronous, like the other small reads of a run's start: a ref file of 41 bytes read in one
 * call costs ~10 µs of CPU, the promise API's open, fstat, read and close ~170 µs (measured on
 * the 2-core bench machine), and a run's start reads two or three of them.
 */
export function readLoose(file: string): string | null | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A directory there (refs below it) or on the way: no loose ref of that name.
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return undefined;
    throw error;
  }
  const id = text.trim();
  return OBJECT_ID.test(id) ? id : null;
}

/** `packed-refs` as ref name → object id (empty when there is none); null: a line it cannot read. */
export function readPacked(file: string): Map<string, string> | null {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw error;
  }
  const refs = new Map<string, string>();
  for (const line of text.split("\n")) {
    // The header (`# pack-refs with: ...`) and the peeled ids of annotated tags (`^<id>`).
    if (line === "" || line.startsWith("#") || line.startsWith("^")) continue;
    const space = line.indexOf(" ");
    const id = line.slice(0, space);
    if (space < 0 || !OBJECT_ID.test(id)) return null;
    refs.set(line.slice(space + 1), id);
  }
  return refs;
}
