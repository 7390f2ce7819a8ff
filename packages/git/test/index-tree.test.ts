import { promises as fs, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseRawDiff } from "../src/changed-paths-parser.ts";
import { runGit, type Worktree } from "../src/index.ts";
import { parseIndex } from "../src/index-file.ts";
import { indexChanges, writeIndexTree } from "../src/index-tree.ts";
import { readMirrorLayout } from "../src/mirror-layout.ts";
import { WorktreeIndex } from "../src/worktree-index.ts";
import { git, useMirrorCheckouts } from "./git-test-helpers.ts";

/**
 * The index read without git (index-file.ts, index-tree.ts) must give what git gives: the
 * tree `git write-tree` writes and the list `git diff-index --cached --no-renames` prints.
 */

const rig = useMirrorCheckouts("index", {
  "README.md": "hello\n",
  "a.txt": "a\n",
  "a/b/c.txt": "deep\n",
  "a/b/d.txt": "deep too\n",
  "a/e.txt": "e\n",
  "a-z.txt": "sorts between a/ and a.txt\n",
  "gone/only.txt": "the whole directory goes\n",
  "script.sh": "#!/bin/sh\n",
  "to-link.txt": "becomes a link\n",
  "z/y/x/w.txt": "far\n",
});
const checkout = () => rig.checkout();

/** git on the checkout's own index. */
async function wtGit(wt: Worktree, ...args: string[]): Promise<string> {
  const { worktreeGitDir } = wt.gitDirs();
  return (await runGit(["--git-dir", worktreeGitDir, "--work-tree", wt.path, ...args], { cwd: wt.path }))
    .stdout;
}

function readIndex(wt: Worktree) {
  return parseIndex(readFileSync(path.join(wt.gitDirs().worktreeGitDir, "index")));
}

/** Edits touching every kind of change and of tree shape. */
async function edit(wt: Worktree): Promise<void> {
  const at = (p: string) => path.join(wt.path, p);
  await fs.writeFile(at("a/b/c.txt"), "changed\n");
  await fs.rm(at("gone"), { recursive: true });
  await fs.chmod(at("script.sh"), 0o755);
  await fs.rm(at("to-link.txt"));
  await fs.symlink("README.md", at("to-link.txt"));
  await fs.rename(at("a/e.txt"), at("a/e-renamed.txt"));
  await fs.mkdir(at("new dir/ünïcødé 文件"), { recursive: true });
  await fs.writeFile(at("new dir/ünïcødé 文件/new\nline.txt"), "x\n");
  await fs.writeFile(at("a.b"), "sorts before a/\n");
  // A name that is not UTF-8: git keeps its bytes.
  await fs.writeFile(Buffer.from(path.join(wt.path, "latin-\xe9.txt"), "latin1"), "bytes\n");
  // An embedded repository: a gitlink entry.
  const sub = at("sub");
  await fs.mkdir(sub);
  await runGit(["init", "-q", sub], { cwd: sub });
  await fs.writeFile(path.join(sub, "f"), "f\n");
  await runGit(["-C", sub, "add", "f"], { cwd: sub });
  await runGit(["-C", sub, "commit", "-q", "-m", "sub"], {
    cwd: sub,
    env: {
      GIT_AUTHOR_NAME: "a",
      GIT_AUTHOR_EMAIL: "a@b",
      GIT_COMMITTER_NAME: "a",
      GIT_COMMITTER_EMAIL: "a@b",
    },
  });
}

describe("the index read without git", () => {
  it("writes the tree git write-tree writes and lists what git diff-index lists", async () => {
    const wt = await checkout();
    const base = readIndex(wt);
    expect(base).not.toBeNull();
    // A fresh checkout's cache tree is the base commit's tree.
    expect(base?.trees.get("")?.sha).toBe(await git(rig.mirror.gitDir, "rev-parse", `${wt.baseSha}^{tree}`));
    await edit(wt);
    await wt.stage();
    const staged = readIndex(wt);
    expect(staged).not.toBeNull();
    const tree = writeIndexTree(rig.mirror.gitDir, staged as NonNullable<typeof staged>);
    expect(tree).toBe((await wtGit(wt, "write-tree")).trim());
    const raw = await wtGit(wt, "diff-index", "--cached", "--raw", "-z", "--no-renames", wt.baseSha, "--");
    const listed = indexChanges(base as NonNullable<typeof base>, staged as NonNullable<typeof staged>);
    expect(listed).toEqual(parseRawDiff(raw));
    expect(listed.map((c) => c.status)).toEqual(
      expect.arrayContaining(["added", "deleted", "modified", "typechange"]),
    );
    await git(rig.mirror.gitDir, "fsck", "--strict", "--no-dangling");
    await wt.remove();
  });

  it("reuses the cache tree's unchanged directories, and writes the root git would after a new staging", async () => {
    const wt = await checkout();
    // Entries staged in the second of the checkout are "racily clean" to git: hashed again,
    // their directories' cache trees dropped. A second later they are plainly unchanged.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await wt.stage();
    const untouched = readIndex(wt);
    // Nothing changed: the root is the base's tree, read from the cache tree.
    expect(writeIndexTree(rig.mirror.gitDir, untouched as NonNullable<typeof untouched>)).toBe(
      await git(rig.mirror.gitDir, "rev-parse", `${wt.baseSha}^{tree}`),
    );
    // write-tree records every directory's tree in the index again; the change drops z's.
    await wtGit(wt, "write-tree");
    await fs.writeFile(path.join(wt.path, "z/y/x/w.txt"), "nearer\n");
    await wt.stage();
    const staged = readIndex(wt) as NonNullable<ReturnType<typeof readIndex>>;
    expect(staged.trees.get("a/b")).toBeDefined();
    expect(staged.trees.get("z")).toBeUndefined();
    expect(writeIndexTree(rig.mirror.gitDir, staged)).toBe((await wtGit(wt, "write-tree")).trim());
    await wt.remove();
  });

  it("leaves other kinds of index to git: version 4, a split index, a conflict", async () => {
    const wt = await checkout();
    await wtGit(wt, "update-index", "--index-version", "4");
    expect(readIndex(wt)).toBeNull();
    await wtGit(wt, "update-index", "--index-version", "2");
    expect(readIndex(wt)).not.toBeNull();
    await wtGit(wt, "update-index", "--split-index");
    expect(readFileSync(path.join(wt.gitDirs().worktreeGitDir, "index")).includes("link")).toBe(true);
    expect(readIndex(wt)).toBeNull();
    await wtGit(wt, "update-index", "--no-split-index");
    expect(readIndex(wt)).not.toBeNull();
    const blob = (await git(rig.mirror.gitDir, "rev-parse", `${wt.baseSha}:a.txt`)).trim();
    await runGit(
      ["--git-dir", wt.gitDirs().worktreeGitDir, "--work-tree", wt.path, "update-index", "--index-info"],
      { cwd: wt.path, input: `100644 ${blob} 2\tconflicted.txt\n` },
    );
    expect(readIndex(wt)).toBeNull();
    await wt.remove();
  });

  it("refuses a damaged index", async () => {
    const wt = await checkout();
    const data = readFileSync(path.join(wt.gitDirs().worktreeGitDir, "index"));
    expect(parseIndex(data)).not.toBeNull();
    const damaged = Buffer.from(data);
    damaged[20] = (damaged[20] as number) ^ 1;
    expect(parseIndex(damaged)).toBeNull();
    expect(parseIndex(data.subarray(0, 30))).toBeNull();
    await wt.remove();
  });

  it("leaves to git a base whose tree git would not write: the checkout's index is not that tree", async () => {
    const blob = (text: string) =>
      runGit(["hash-object", "-w", "--stdin"], { cwd: rig.mirror.gitDir, input: text }).then((r) =>
        r.stdout.trim(),
      );
    const one = await blob("one\n");
    const two = await blob("two\n");
    const entry = (mode: string, name: string, sha: string) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(sha, "hex")]);
    const damaged = [
      // Out of order: git lists `a` added and deleted against it.
      [entry("100644", "b", one), entry("100644", "a", two)],
      // A name twice: the checkout holds one of them.
      [entry("100644", "a", one), entry("100644", "a", two)],
    ];
    for (const entries of damaged) {
      const tree = (
        await runGit(["hash-object", "-t", "tree", "-w", "--literally", "--stdin"], {
          cwd: rig.mirror.gitDir,
          input: Buffer.concat(entries),
        })
      ).stdout.trim();
      const base = await git(rig.mirror.gitDir, "commit-tree", "-m", "damaged", tree);
      const wt = await rig.checkout({ base });
      const index = new WorktreeIndex(wt.gitDirs().worktreeGitDir, true);
      await fs.writeFile(path.join(wt.path, "c"), "c\n");
      await wt.stage();
      const raw = await wtGit(wt, "diff-index", "--cached", "--raw", "-z", "--no-renames", base, "--");
      expect(parseRawDiff(raw).map((c) => c.path)).toEqual(expect.arrayContaining(["a", "c"]));
      expect(index.changes()).toBeNull();
      expect(await wt.changedPaths({ staged: true, renames: false })).toEqual(
        await wt.changedPaths({ staged: true }),
      );
      await wt.remove();
    }
  });

  it("leaves a repository whose objects are not SHA-1 to git", async () => {
    const repo = path.join(rig.dir, "sha256");
    await runGit(["init", "-q", "--object-format=sha256", repo], { cwd: rig.dir });
    await fs.writeFile(path.join(repo, "f"), "f\n");
    await runGit(["add", "f"], { cwd: repo });
    // Its entries hold 32-byte ids: read with 20-byte ones they would be garbage, whatever its trailer.
    // What a mirror's layout says of it, and so what its worktrees are given.
    expect((await readMirrorLayout(path.join(repo, ".git"))).plainObjects).toBe(false);
    const index = new WorktreeIndex(path.join(repo, ".git"), false);
    expect(index.writeTree(path.join(repo, ".git"))).toBeNull();
    expect(index.changes()).toBeNull();
    expect(index.baseTree()).toBeNull();
  });
});
