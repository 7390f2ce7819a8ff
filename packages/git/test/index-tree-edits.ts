import { promises as fs } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { git } from "./git-test-helpers.ts";

/**
 * Random trees and random edits for the index parity properties (index-tree.property.test.ts).
 * Paths are byte strings held one character per byte (latin1), as index-file.ts reads them,
 * so names that are not UTF-8 are written with their exact bytes.
 */

/** Names that sort tricky against each other and against `/` (0x2f), and bytes ≥ 0x80. */
export const NAMES = [
  "a",
  "a.b",
  "a-b",
  "a b",
  "a0",
  "ab",
  "a~",
  "A",
  "b",
  "\xe9", // a lone byte: not UTF-8
  "\xc3\xa9", // é in UTF-8
  "\xff\xfe",
  "a\nb",
];
const CONTENTS = ["", "a\n", "b\n", "#!/bin/sh\n", "x".repeat(90)];
const TARGETS = ["a", "../a", "a/b", "missing", "\xe9"];

export type Leaf =
  | { kind: "file"; content: number; exec: boolean }
  | { kind: "link"; target: number }
  | { kind: "gitlink" };

export interface Planted {
  segments: string[];
  leaf: Leaf;
}

const segments = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 });
const leaf: fc.Arbitrary<Leaf> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("file" as const), content: fc.nat(4), exec: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("link" as const), target: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("gitlink" as const) }) },
);

/** A starting tree: up to 10 leaves, deep paths included (later conflicting ones are dropped). */
export const treeArb = fc.array(fc.record({ segments, leaf }), { minLength: 1, maxLength: 10 });

export type EditOp =
  | "write"
  | "delete"
  | "modify"
  | "chmod"
  | "symlink"
  | "todir"
  | "tofile"
  | "rename"
  | "empty"
  | "gitlink"
  | "touch";

export interface Edit {
  op: EditOp;
  /** Which existing path (modulo their count) the edit applies to. */
  pick: number;
  /** The new path, for the edits that make one. */
  to: string[];
  content: number;
}

export const editsArb = (max: number) =>
  fc.array(
    fc.record({
      op: fc.constantFrom<EditOp>(
        "write",
        "delete",
        "modify",
        "chmod",
        "symlink",
        "todir",
        "tofile",
        "rename",
        "empty",
        "gitlink",
        "touch",
      ),
      pick: fc.nat(1000),
      to: segments,
      content: fc.nat(4),
    }),
    { minLength: 1, maxLength: max },
  );

const bytes = (root: string, rel: string) => Buffer.from(path.join(root, rel), "latin1");

type Kind = "file" | "dir" | "link" | "gitlink";

async function kindOf(root: string, rel: string): Promise<Kind | null> {
  const stat = await fs.lstat(bytes(root, rel)).catch(() => null);
  if (stat === null) return null;
  if (stat.isSymbolicLink()) return "link";
  if (!stat.isDirectory()) return "file";
  return (await fs.lstat(bytes(root, `${rel}/.git`)).catch(() => null)) ? "gitlink" : "dir";
}

/** Every path of the checkout (dirs too), a gitlink's insides and `.git` left out. */
export async function listPaths(root: string, rel = ""): Promise<{ rel: string; kind: Kind }[]> {
  const found: { rel: string; kind: Kind }[] = [];
  const names = await fs.readdir(bytes(root, rel), { encoding: "buffer" });
  for (const raw of names.map((n) => n.toString("latin1")).sort()) {
    if (raw === ".git") continue;
    const child = rel === "" ? raw : `${rel}/${raw}`;
    const kind = (await kindOf(root, child)) as Kind;
    found.push({ rel: child, kind });
    if (kind === "dir") found.push(...(await listPaths(root, child)));
  }
  return found;
}

/** Makes `rel`'s parent directories, removing any file or link in their way (file → dir). */
async function makeParents(root: string, rel: string): Promise<void> {
  const parts = rel.split("/").slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    const kind = await kindOf(root, dir);
    if (kind === "dir") continue;
    if (kind !== null) await fs.rm(bytes(root, dir), { recursive: true, force: true });
    await fs.mkdir(bytes(root, dir));
  }
}

/** Puts `leaf` at `rel`, replacing whatever is there. `gitdir`: the repository a gitlink points to. */
export async function plant(root: string, rel: string, what: Leaf, gitdir: string): Promise<void> {
  await makeParents(root, rel);
  const at = bytes(root, rel);
  await fs.rm(at, { recursive: true, force: true });
  if (what.kind === "file") {
    await fs.writeFile(at, CONTENTS[what.content] as string, { mode: what.exec ? 0o755 : 0o644 });
  } else if (what.kind === "link") {
    await fs.symlink(Buffer.from(TARGETS[what.target] as string, "latin1"), at);
  } else {
    // An embedded repository: a gitlink once staged. A `.git` file is enough for git.
    await fs.mkdir(at);
    await fs.writeFile(Buffer.concat([at, Buffer.from("/.git")]), `gitdir: ${gitdir}\n`);
  }
}

/** Writes a starting tree into the empty directory `root`; leaves whose path conflicts are dropped. */
export async function plantTree(root: string, tree: Planted[], gitdir: string): Promise<void> {
  for (const { segments: parts, leaf: what } of tree) {
    const rel = parts.join("/");
    let free = (await kindOf(root, rel)) === null;
    for (let i = 1; i < parts.length && free; i++) {
      const kind = await kindOf(root, parts.slice(0, i).join("/"));
      free = kind === null || kind === "dir";
    }
    if (free) await plant(root, rel, what, gitdir);
  }
}

/** Applies one edit to the checkout at `root`; an edit that does not fit its pick does nothing. */
export async function applyEdit(root: string, edit: Edit, gitdir: string): Promise<void> {
  const paths = await listPaths(root);
  const picked = paths.length === 0 ? undefined : paths[edit.pick % paths.length];
  const to = edit.to.join("/");
  const at = (rel: string) => bytes(root, rel);
  const content = CONTENTS[edit.content] as string;
  if (edit.op === "write")
    return plant(root, to, { kind: "file", content: edit.content, exec: false }, gitdir);
  if (edit.op === "gitlink") return plant(root, to, { kind: "gitlink" }, gitdir);
  if (picked === undefined) return;
  const { rel, kind } = picked;
  switch (edit.op) {
    case "delete":
      return fs.rm(at(rel), { recursive: true, force: true });
    case "modify":
      return kind === "file" ? fs.writeFile(at(rel), content) : undefined;
    case "touch":
      return kind === "file" ? fs.writeFile(at(rel), await fs.readFile(at(rel))) : undefined;
    case "chmod":
      return kind === "file" ? fs.chmod(at(rel), ((await fs.stat(at(rel))).mode & 0o777) ^ 0o111) : undefined;
    case "symlink":
      return plant(root, rel, { kind: "link", target: edit.content }, gitdir);
    case "todir":
      if (kind !== "file" && kind !== "link") return;
      return plant(
        root,
        `${rel}/${edit.to[0]}`,
        { kind: "file", content: edit.content, exec: false },
        gitdir,
      );
    case "tofile":
      if (kind !== "dir" && kind !== "gitlink") return;
      return plant(root, rel, { kind: "file", content: edit.content, exec: true }, gitdir);
    case "empty":
      if (kind !== "dir") return;
      for (const name of await fs.readdir(at(rel), { encoding: "buffer" }))
        await fs.rm(at(`${rel}/${name.toString("latin1")}`), { recursive: true, force: true });
      return;
    case "rename":
      if (to === rel || to.startsWith(`${rel}/`) || rel.startsWith(`${to}/`)) return;
      await makeParents(root, to);
      await fs.rm(at(to), { recursive: true, force: true });
      return fs.rename(at(rel), at(to));
  }
}

/** Sets every path's times 10 s back, so git finds no entry racily clean (its cache tree kept). */
export async function settle(root: string): Promise<void> {
  const past = new Date(Date.now() - 10_000);
  for (const { rel } of await listPaths(root)) await fs.lutimes(bytes(root, rel), past, past);
}

/** A repository with one commit under `dir`: what the gitlinks' `.git` files point to. Returns its git dir. */
export async function embeddedRepository(dir: string): Promise<string> {
  const sub = path.join(dir, "embedded");
  await fs.mkdir(sub);
  await git(sub, "init", "-q");
  await git(sub, "commit", "-q", "--allow-empty", "-m", "embedded");
  return path.join(sub, ".git");
}
