import fsSync, { promises as fs } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { branchHeadsFromFiles } from "../src/ref-files.ts";
import { RepoMirror } from "../src/repo-mirror.ts";
import { commitOnRemote, git, makeRemote, useTempScope } from "./git-test-helpers.ts";

const temp = useTempScope();

async function mirrorWithBranches() {
  const dir = await temp.make();
  const remote = await makeRemote(dir, { "README.md": "hello\n" });
  await commitOnRemote(remote, "feature/x", { "x.txt": "x\n" }, "x");
  await commitOnRemote(remote, "other", { "o.txt": "o\n" }, "o");
  const mirror = new RepoMirror({ dataDir: path.join(dir, "data"), projectId: "demo", remote });
  await mirror.ensure();
  return { dir, remote, mirror };
}

/** git's own answer: `for-each-ref` over the exact names. */
async function gitHeads(gitDir: string, names: readonly string[]): Promise<Map<string, string | null>> {
  const out = await git(
    gitDir,
    "for-each-ref",
    "--format=%(objectname) %(refname)",
    ...names.map((n) => `refs/heads/${n}`),
  );
  const found = new Map(
    out
      .split("\n")
      .filter(Boolean)
      .map((l) => [l.split(" ")[1]?.slice(11), l.split(" ")[0]]),
  );
  return new Map(names.map((n) => [n, found.get(n) ?? null]));
}

const NAMES = ["main", "feature/x", "other", "feature", "missing", "feature/x/y"];

describe("branch heads from the ref files", () => {
  it("answers as git does for loose refs, packed refs, a loose ref newer than its packed one, and absent names", async () => {
    const { remote, mirror } = await mirrorWithBranches();
    const asGit = async () =>
      expect(await branchHeadsFromFiles(mirror.gitDir, NAMES)).toEqual(await gitHeads(mirror.gitDir, NAMES));
    await asGit();
    await git(mirror.gitDir, "pack-refs", "--all", "--prune");
    await expect(fs.access(path.join(mirror.gitDir, "refs/heads/main"))).rejects.toThrow();
    await asGit();
    // A fetch after the packing writes a loose ref that wins over the packed one.
    const moved = await commitOnRemote(remote, "main", { "README.md": "hello 2\n" }, "main 2");
    await mirror.ensure();
    expect((await branchHeadsFromFiles(mirror.gitDir, ["main"]))?.get("main")).toBe(moved);
    await asGit();
    expect(await mirror.branchHeads(NAMES)).toEqual(await gitHeads(mirror.gitDir, NAMES));
  });

  it("leaves a symbolic ref, another ref backend or an unreadable packed-refs to git (null)", async () => {
    const { mirror } = await mirrorWithBranches();
    await git(mirror.gitDir, "symbolic-ref", "refs/heads/alias", "refs/heads/main");
    expect(await branchHeadsFromFiles(mirror.gitDir, ["alias"])).toBeNull();
    // The mirror's answer still comes, from git.
    expect((await mirror.branchHeads(["alias"])).get("alias")).toBe(
      (await gitHeads(mirror.gitDir, ["main"])).get("main"),
    );

    const fake = path.join(await temp.make(), "fake.git");
    await fs.mkdir(fake, { recursive: true });
    await fs.writeFile(
      path.join(fake, "config"),
      "[core]\n\trepositoryformatversion = 1\n[extensions]\n\trefStorage = reftable\n",
    );
    expect(await branchHeadsFromFiles(fake, ["main"])).toBeNull();
    await fs.writeFile(path.join(fake, "config"), "[core]\n\tbare = true\n");
    await fs.writeFile(path.join(fake, "packed-refs"), "not a packed ref\n");
    expect(await branchHeadsFromFiles(fake, ["main"])).toBeNull();
  });

  it("says that a mirror that was never cloned does not exist yet", async () => {
    const dir = await temp.make();
    const mirror = new RepoMirror({ dataDir: path.join(dir, "data"), projectId: "none", remote: dir });
    await expect(mirror.branchHeads(["main"])).rejects.toThrow(/does not exist yet; call ensure\(\) first/);
  });

  it("reads the mirror's config once for a run's start: the layout is shared by the heads and the worktree", async () => {
    const { dir, mirror } = await mirrorWithBranches();
    const reads = vi.spyOn(fsSync, "readFileSync");
    const promiseReads = vi.spyOn(fs, "readFile");
    try {
      const readsOf = (file: string) => reads.mock.calls.filter(([read]) => String(read) === file).length;
      const layout = mirror.readLayout();
      const heads = await mirror.branchHeads(["main"], layout);
      const worktree = await mirror.addWorktree({
        base: heads.get("main") as string,
        path: path.join(dir, "checkout"),
        layout,
      });
      expect(readsOf(path.join(mirror.gitDir, "config"))).toBe(1);
      expect(readsOf(path.join(mirror.gitDir, "refs", "heads", "main"))).toBe(1);
      // Each small file in one synchronous call: no promise API read (open, fstat, read, close
      // through the thread pool, ~17 times the CPU) on a run's start.
      expect(promiseReads).not.toHaveBeenCalled();
      expect(await fs.readFile(path.join(worktree.path, "README.md"), "utf8")).toBe("hello\n");
      await expect(layout).resolves.toEqual({ refStorage: false, worktreeConfig: false, plainObjects: true });
    } finally {
      reads.mockRestore();
      promiseReads.mockRestore();
    }
  });
});
