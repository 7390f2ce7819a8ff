import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GitError, pushBranch, RepoMirror, runGit } from "../src/index.ts";
import { transferObjects } from "../src/object-transfer.ts";
import { PackIndexes } from "../src/pack-index.ts";
import {
  expectWhole,
  git,
  headOf,
  makeRemote,
  TEST_AUTHOR,
  tracingGit,
  useTempScope,
} from "./git-test-helpers.ts";

/**
 * The push to a local remote without git's transport (local-push.ts): what it copies and moves,
 * checked with git's own fsck and reads, and every case it leaves to `git push`.
 */

const temp = useTempScope();
const BRANCH = "overseer/task/T1";

async function rig(options: { remote?: (dir: string) => Promise<string> } = {}) {
  const dir = await temp.make();
  const remote = options.remote
    ? await options.remote(dir)
    : await makeRemote(dir, { "a.txt": "a\n", "src/lib/x.ts": "x\n", "src/y.ts": "y\n" });
  const mirror = new RepoMirror({ dataDir: path.join(dir, "data"), projectId: "p", remote });
  await mirror.ensure();
  const wt = await mirror.addWorktree({ base: "main", path: path.join(dir, "job") });
  const commit = async (files: Record<string, string>) => {
    for (const [name, content] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(wt.path, name)), { recursive: true });
      await fs.writeFile(path.join(wt.path, name), content);
    }
    return (await wt.commit({ message: "work", trailers: { Task: "T1" }, author: TEST_AUTHOR })) as string;
  };
  return { dir, remote, mirror, wt, commit };
}

async function pushTraced(mirror: RepoMirror, sha: string, expectedOldSha: string | null) {
  return tracingGit(temp, () => pushBranch(mirror, { branch: BRANCH, sha, expectedOldSha }));
}

describe("a push to a local remote without git's transport", () => {
  it("copies exactly the objects the remote lacks, moves the branch and the mirror's copy, with no git process", async () => {
    const { remote, mirror, commit } = await rig();
    const sha = await commit({ "src/lib/x.ts": "x2\n" });
    const { result, processes } = await pushTraced(mirror, sha, null);
    expect(result).toEqual({ ok: true });
    expect(processes.total).toBe(0);
    expect(await headOf(remote, BRANCH)).toBe(sha);
    expect(await git(mirror.gitDir, "rev-parse", `refs/heads/${BRANCH}`)).toBe(sha);
    await expectWhole(remote);
    // The commit, the root tree, src/, src/lib/ and the new blob.
    const objects = await git(remote, "rev-list", "--objects", sha, "--not", "main");
    expect(objects.split("\n")).toHaveLength(5);
  });

  it("finds what a packed remote holds in its pack indexes, with a bucket read at once or searched", async () => {
    const { remote, mirror, commit } = await rig();
    await git(remote, "gc", "--quiet", "--prune=now");
    const sha = await commit({ "src/y.ts": "y2\n" });
    const expected = (
      await git(mirror.gitDir, "rev-list", "--objects", "--no-object-names", sha, "--not", "main")
    )
      .split("\n")
      .filter((line) => line !== "");
    for (const limit of [1024, 0]) {
      const packs = new PackIndexes(remote, limit);
      const main = (await headOf(remote, "main")) as string;
      expect(packs.has(main)).toBe(true);
      expect(packs.has(sha)).toBe(false);
      expect(packs.has("0".repeat(40))).toBe(false);
      expect(packs.has("f".repeat(40))).toBe(false);
      packs.close();
    }
    const transfer = transferObjects(mirror.gitDir, remote, sha, 100);
    expect([...(transfer?.copied ?? [])].sort()).toEqual([...expected].sort());
    // Children first: the commit last, the root tree before it.
    expect(transfer?.copied.at(-1)).toBe(sha);
    expect(await pushBranch(mirror, { branch: BRANCH, sha, expectedOldSha: null })).toEqual({ ok: true });
    await expectWhole(remote);
  });

  it("moves a branch of a working copy with git update-ref, which keeps the reflog receive-pack would", async () => {
    const { remote, mirror, commit } = await rig({
      remote: async (dir) => {
        const bare = await makeRemote(dir, { "a.txt": "a\n" });
        await git(dir, "clone", "--quiet", bare, "user");
        return path.join(dir, "user");
      },
    });
    const sha = await commit({ "b.txt": "b\n" });
    const { result, processes } = await pushTraced(mirror, sha, null);
    expect(result).toEqual({ ok: true });
    expect(processes.commands).toEqual(["update-ref"]);
    expect(await git(remote, "reflog", "show", "--format=%H %gs", `refs/heads/${BRANCH}`)).toBe(
      `${sha} push`,
    );
    await expectWhole(remote);

    // Its checked-out branch is git's to refuse, as it always did.
    const main = (await headOf(remote, "main")) as string;
    const error = await pushBranch(mirror, { branch: "main", sha, expectedOldSha: main }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GitError);
    expect(String((error as GitError).message)).toMatch(/checked out/);
    expect(await headOf(remote, "main")).toBe(main);
  });

  it("leaves to git push a remote whose config receive-pack acts on, alternates, or a lock another writer holds", async () => {
    for (const arrange of [
      (remote: string) => git(remote, "config", "receive.fsckObjects", "true"),
      (remote: string) => git(remote, "config", "transfer.fsckObjects", "true"),
      async (remote: string) => {
        const lender = await makeRemote(await temp.make(), { "l.txt": "l\n" });
        await fs.writeFile(
          path.join(remote, "objects", "info", "alternates"),
          `${path.join(lender, "objects")}\n`,
        );
      },
    ]) {
      const { remote, mirror, commit } = await rig();
      await arrange(remote);
      const sha = await commit({ "c.txt": "c\n" });
      const { result, processes } = await pushTraced(mirror, sha, null);
      expect(result).toEqual({ ok: true });
      expect(processes.commands).toContain("push");
      expect(await headOf(remote, BRANCH)).toBe(sha);
    }

    const { remote, mirror, commit } = await rig();
    const sha = await commit({ "c.txt": "c\n" });
    const lock = path.join(remote, "refs", "heads", `${BRANCH}.lock`);
    await fs.mkdir(path.dirname(lock), { recursive: true });
    await fs.writeFile(lock, "");
    const { result, processes } = await tracingGit(temp, () =>
      pushBranch(mirror, { branch: BRANCH, sha, expectedOldSha: null }).catch((e: unknown) => e),
    );
    expect(result).toBeInstanceOf(GitError);
    expect(processes.commands).toContain("push");
    expect(await fs.readFile(lock, "utf8")).toBe("");
    expect(await headOf(remote, BRANCH)).toBeNull();
  });

  it("leaves to git push an object the remote lacks that the mirror holds only packed", async () => {
    const { remote, mirror, commit } = await rig();
    // The blob is in the mirror before the run stages it, and packed there (an earlier run's
    // object that was never pushed, packed by the mirror's maintenance).
    const blob = await runGit(["hash-object", "-w", "--stdin"], { cwd: mirror.gitDir, input: "packed\n" });
    const id = blob.stdout.trim();
    await runGit(["pack-objects", "-q", path.join(mirror.gitDir, "objects", "pack", "pack")], {
      cwd: mirror.gitDir,
      input: `${id}\n`,
    });
    await git(mirror.gitDir, "prune-packed");
    await expect(
      fs.access(path.join(mirror.gitDir, "objects", id.slice(0, 2), id.slice(2))),
    ).rejects.toThrow();
    const sha = await commit({ "p.txt": "packed\n" });
    expect(transferObjects(mirror.gitDir, remote, sha, 100)).toBeNull();
    const { result, processes } = await pushTraced(mirror, sha, null);
    expect(result).toEqual({ ok: true });
    expect(processes.commands).toContain("push");
    await expectWhole(remote);
  });

  it("leaves to git push a branch whose name a ref of the remote is in the way of", async () => {
    const { remote, mirror, commit } = await rig();
    const main = (await headOf(remote, "main")) as string;
    await git(remote, "update-ref", "refs/heads/overseer", main);
    const sha = await commit({ "d.txt": "d\n" });
    const error = await pushBranch(mirror, { branch: BRANCH, sha, expectedOldSha: null }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GitError);
    expect(await headOf(remote, "overseer")).toBe(main);

    // The same conflict in packed-refs.
    await git(remote, "pack-refs", "--all");
    const again = await pushBranch(mirror, { branch: BRANCH, sha, expectedOldSha: null }).catch(
      (e: unknown) => e,
    );
    expect(again).toBeInstanceOf(GitError);
  });

  it("stops at a larger push than its bound, which git packs", async () => {
    const { remote, mirror, commit } = await rig();
    const files: Record<string, string> = {};
    for (let i = 0; i < 12; i++) files[`many/f${i}.txt`] = `${i}\n`;
    const sha = await commit(files);
    expect(transferObjects(mirror.gitDir, remote, sha, 10)).toBeNull();
    expect(transferObjects(mirror.gitDir, remote, sha, 20)?.copied).toHaveLength(15);
  });
});
