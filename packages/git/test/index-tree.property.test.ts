import { promises as fs, readFileSync } from "node:fs";
import path from "node:path";
import { inflateSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRawDiff } from "../src/changed-paths-parser.ts";
import { RepoMirror, runGit, type Worktree } from "../src/index.ts";
import { parseIndex } from "../src/index-file.ts";
import { WorktreeIndex } from "../src/worktree-index.ts";
import { makeRemote, TEST_AUTHOR, tempScope } from "./git-test-helpers.ts";
import {
  applyEdit,
  type Edit,
  editsArb,
  embeddedRepository,
  type Planted,
  plantTree,
  settle,
  treeArb,
} from "./index-tree-edits.ts";

/**
 * Parity of the index read without git (index-file.ts, index-tree.ts, as worktree-index.ts
 * uses them) with git itself, on random starting trees and random edits staged as the worker
 * stages them: the tree `git write-tree` writes, and what `git diff-index --cached --raw
 * --no-renames <base>` lists (the scope check's input), with the cache tree whole, partly
 * invalidated (write-tree on an earlier state, `update-index` of one path) or dropped.
 */

const temp = tempScope();
let dir = "";
let mirror: RepoMirror;
/** A repository with one commit: what the gitlinks' `.git` files point to. */
let embedded = "";
let runs = 0;
const identity = {
  GIT_AUTHOR_NAME: TEST_AUTHOR.name,
  GIT_AUTHOR_EMAIL: TEST_AUTHOR.email,
  GIT_COMMITTER_NAME: TEST_AUTHOR.name,
  GIT_COMMITTER_EMAIL: TEST_AUTHOR.email,
};

beforeAll(async () => {
  dir = await temp.make();
  mirror = new RepoMirror({
    dataDir: path.join(dir, "data"),
    projectId: "props",
    remote: await makeRemote(dir, { "README.md": "hello\n" }),
  });
  await mirror.ensure();
  embedded = await embeddedRepository(dir);
});
afterAll(() => temp.cleanup());

/** Commits `tree` into the mirror (through a scratch index, as a project's history would hold it). */
async function commitBase(tree: Planted[], damage: Damage = "none"): Promise<{ sha: string; tree: string }> {
  const scratch = path.join(dir, "scratch", `s-${runs}`);
  await fs.mkdir(scratch, { recursive: true });
  await plantTree(scratch, tree, embedded);
  const scratchGit = async (args: string[], extra: Record<string, string> = {}) =>
    (
      await runGit(["--git-dir", mirror.gitDir, "--work-tree", scratch, ...args], {
        cwd: scratch,
        env: { GIT_INDEX_FILE: `${scratch}.index`, ...identity, ...extra },
      })
    ).stdout.trim();
  await scratchGit(["add", "--all"]);
  const treeSha = await damaged(await scratchGit(["write-tree"]), damage);
  const sha = await scratchGit(["commit-tree", "-m", "base", treeSha]);
  await fs.rm(scratch, { recursive: true, force: true });
  await fs.rm(`${scratch}.index`, { force: true });
  return { sha, tree: treeSha };
}

/**
 * A root tree git would not write, as a project's history may hold one (made by other tools):
 * its first two entries swapped, its first entry twice, or its first file's mode the old 100664.
 */
type Damage = "none" | "swap" | "twice" | "mode";

async function damaged(tree: string, damage: Damage): Promise<string> {
  const file = path.join(mirror.gitDir, "objects", tree.slice(0, 2), tree.slice(2));
  const object = await fs.readFile(file).catch(() => null);
  if (damage === "none" || object === null) return tree;
  const raw = inflateSync(object);
  const entries: Buffer[] = [];
  for (let at = raw.indexOf(0) + 1; at < raw.length; ) {
    const end = raw.indexOf(0, at) + 21;
    entries.push(raw.subarray(at, end));
    at = end;
  }
  const [first, second] = entries;
  if (first === undefined) return tree;
  if (damage === "swap" && second !== undefined) entries.splice(0, 2, second, first);
  if (damage === "twice" && first.toString("latin1").startsWith("100")) entries.unshift(first);
  if (damage === "mode" && first.toString("latin1").startsWith("100644 "))
    entries[0] = Buffer.concat([Buffer.from("100664"), first.subarray(6)]);
  const body = Buffer.concat(entries);
  const args = ["--git-dir", mirror.gitDir, "hash-object", "-t", "tree", "-w", "--literally", "--stdin"];
  return (await runGit(args, { cwd: dir, input: body })).stdout.trim();
}

/** git on the checkout's own index. */
async function wtGit(wt: Worktree, args: string[]): Promise<string> {
  const { worktreeGitDir } = wt.gitDirs();
  return (await runGit(["--git-dir", worktreeGitDir, "--work-tree", wt.path, ...args], { cwd: wt.path }))
    .stdout;
}

/**
 * The worker's answers (read without git) must be git's. git answers from a copy of the index:
 * write-tree would record every directory's tree in the index, a state the worker's own steps
 * never leave.
 */
async function expectParity(wt: Worktree, index: WorktreeIndex, damage: Damage = "none"): Promise<void> {
  index.invalidate();
  const tree = index.writeTree(mirror.gitDir);
  const changes = index.changes();
  expect(tree).not.toBeNull();
  const copy = path.join(dir, "index-copy");
  await fs.copyFile(path.join(wt.gitDirs().worktreeGitDir, "index"), copy);
  const onCopy = async (args: string[]) =>
    (
      await runGit(["--git-dir", wt.gitDirs().worktreeGitDir, "--work-tree", wt.path, ...args], {
        cwd: wt.path,
        env: { GIT_INDEX_FILE: copy },
      })
    ).stdout;
  expect(tree).toBe((await onCopy(["write-tree"])).trim());
  const raw = await onCopy(["diff-index", "--cached", "--raw", "-z", "--no-renames", wt.baseSha, "--"]);
  // A damaged base may be left to git (null), never answered otherwise than git answers.
  if (changes !== null || damage === "none") expect(changes).toEqual(parseRawDiff(raw));
}

async function checkout(
  tree: Planted[],
  neverCommit: string[] = [],
  damage: Damage = "none",
): Promise<{ wt: Worktree; index: WorktreeIndex }> {
  runs++;
  const base = await commitBase(tree, damage);
  const at = path.join(dir, "jobs", `job-${runs}`);
  const wt = await mirror.addWorktree({ base: base.sha, path: at, neverCommit });
  // Read as the worker reads it: as soon as the checkout is made.
  const index = new WorktreeIndex(wt.gitDirs().worktreeGitDir, true);
  // A damaged base (a name twice) may record a root the entries do not fill: not taken.
  expect(damage === "none" ? [base.tree] : [base.tree, null]).toContain(index.baseTree());
  return { wt, index };
}

const indexOf = (wt: Worktree) => readFileSync(path.join(wt.gitDirs().worktreeGitDir, "index"));

async function applyAll(wt: Worktree, edits: Edit[]): Promise<void> {
  for (const edit of edits) await applyEdit(wt.path, edit, embedded);
}

/** Each run is ~6 git processes (~0.2 s): enough runs to meet each edit kind, few enough for a unit test. */
const RUNS = 25;
const damageArb = fc.constantFrom<Damage>("none", "none", "none", "swap", "twice", "mode");

describe("the index read without git, on random trees and edits", () => {
  it("gives git's tree and git's changes after the worker's staging", async () => {
    await fc.assert(
      fc.asyncProperty(
        treeArb,
        editsArb(6),
        fc.boolean(),
        damageArb,
        async (tree, edits, settled, damage) => {
          const { wt, index } = await checkout(tree, [], damage);
          try {
            // Settled: the checkout's entries are not racily clean, their cache trees survive the staging.
            if (settled) await settle(wt.path);
            await applyAll(wt, edits);
            await wt.stage();
            await expectParity(wt, index, damage);
          } finally {
            await wt.remove();
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("gives git's answers with a cache tree partly invalidated: write-tree on an earlier state, update-index of one path", async () => {
    await fc.assert(
      fc.asyncProperty(treeArb, editsArb(4), editsArb(3), fc.nat(1000), async (tree, first, second, pick) => {
        const { wt, index } = await checkout(tree);
        try {
          await applyAll(wt, first);
          await wt.stage();
          await settle(wt.path);
          // Every directory's tree recorded in the index, then some of them invalidated.
          await wtGit(wt, ["write-tree"]);
          await applyAll(wt, second);
          await wt.stage();
          await expectParity(wt, index);
          // One path changed and staged alone: only its directories lose their cache trees.
          const entries = parseIndex(indexOf(wt))?.entries ?? [];
          const one = entries[pick % Math.max(entries.length, 1)];
          if (one === undefined) return;
          const file = Buffer.from(path.join(wt.path, one.path), "latin1");
          if ((await fs.lstat(file).catch(() => null))?.isFile()) await fs.appendFile(file, "more\n");
          await runGit(
            [
              "--git-dir",
              wt.gitDirs().worktreeGitDir,
              "--work-tree",
              wt.path,
              "update-index",
              "-z",
              "--stdin",
            ],
            { cwd: wt.path, input: Buffer.from(`${one.path}\0`, "latin1") },
          );
          await expectParity(wt, index);
        } finally {
          await wt.remove();
        }
      }),
      { numRuns: RUNS - 5 },
    );
  });

  it("gives git's answers over the worker's own steps: stagings, commits written without git, amends", async () => {
    const step = fc.record({ edits: editsArb(3), finish: fc.constantFrom("stage", "commit", "amend") });
    await fc.assert(
      fc.asyncProperty(
        treeArb,
        fc.array(step, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        damageArb,
        async (tree, steps, never, damage) => {
          // A never-committed path (the worker's `.env`), among the generated names.
          const { wt, index } = await checkout(tree, never ? ["a b"] : [], damage);
          try {
            for (const { edits, finish } of steps) {
              await applyAll(wt, edits);
              if (finish === "stage") await wt.stage();
              else {
                const amend = finish === "amend" && (await wt.head()) !== wt.baseSha;
                await wt.commit({ message: "step", trailers: {}, author: TEST_AUTHOR, amend });
              }
              await expectParity(wt, index, damage);
            }
          } finally {
            await wt.remove();
          }
        },
      ),
      { numRuns: RUNS - 5 },
    );
  });
});

describe("the kinds of index left to git", () => {
  it("reads none git wrote with a split index, version 4, feature.manyFiles, skip-worktree or intent-to-add; reads an untracked cache, an end-of-entries marker and a skipped hash", async () => {
    const { wt } = await checkout([
      { segments: ["a", "b"], leaf: { kind: "file", content: 1, exec: false } },
    ]);
    try {
      // The index written anew by git with `config` (settings such as index.version only
      // apply to a new index), then a staging with it.
      const fresh = async (...config: string[]) => {
        const flags = config.flatMap((c) => ["-c", c]);
        await fs.rm(path.join(wt.gitDirs().worktreeGitDir, "index"));
        await wtGit(wt, [...flags, "read-tree", "HEAD"]);
        await fs.appendFile(path.join(wt.path, "a", "b"), "x");
        await wtGit(wt, [...flags, "add", "--all"]);
        await wtGit(wt, [...flags, "status", "--porcelain"]);
        return indexOf(wt);
      };
      const split = await fresh("core.splitIndex=true", "splitIndex.maxPercentChange=0");
      expect(split.includes("link")).toBe(true);
      expect(parseIndex(split)).toBeNull();
      expect(parseIndex(await fresh("core.splitIndex=false"))).not.toBeNull();
      const v4 = await fresh("index.version=4");
      expect(v4.readUInt32BE(4)).toBe(4);
      expect(parseIndex(v4)).toBeNull();
      const many = await fresh("feature.manyFiles=true");
      expect(many.readUInt32BE(4)).toBe(4);
      expect(parseIndex(many)).toBeNull();
      // An untracked cache (UNTR) is optional to read: skipped.
      const untracked = await fresh("index.version=2", "core.untrackedCache=true");
      expect(untracked.includes("UNTR")).toBe(true);
      expect(parseIndex(untracked)).not.toBeNull();
      // No checksum: git ≥ 2.40 writes zeros with index.skipHash (older git ignores the setting).
      const skipped = await fresh("index.skipHash=true");
      const zeroed = Buffer.from(skipped);
      zeroed.fill(0, zeroed.length - 20);
      expect(parseIndex(skipped)).not.toBeNull();
      expect(parseIndex(zeroed)).toEqual(parseIndex(skipped));
      // The end-of-entries marker (EOIE), optional too.
      const marked = await fresh("index.recordEndOfIndexEntries=true", "index.recordOffsetTable=true");
      expect(marked.includes("EOIE")).toBe(true);
      expect(parseIndex(marked)?.entries.map((e) => e.path)).toEqual(["a/b"]);
      // Entry flags git's own rules apply to: skip-worktree, intent-to-add.
      await wtGit(wt, ["update-index", "--skip-worktree", "a/b"]);
      expect(parseIndex(indexOf(wt))).toBeNull();
      await wtGit(wt, ["update-index", "--no-skip-worktree", "a/b"]);
      expect(parseIndex(indexOf(wt))).not.toBeNull();
      await fs.writeFile(path.join(wt.path, "new"), "new\n");
      await wtGit(wt, ["add", "--intent-to-add", "new"]);
      expect(parseIndex(indexOf(wt))).toBeNull();
    } finally {
      await wt.remove();
    }
  });
});
