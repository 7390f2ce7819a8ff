import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GitInputError, LandRaceError, RepoMirror } from "../src/index.ts";
import {
  commitOnRemote,
  conflictingEdits,
  git,
  headOf,
  isAncestor,
  LANDING_FILES,
  landingRig,
  landOnMain,
  makeRemote,
  snapshotTree,
  TEST_AUTHOR,
  useTempScope,
} from "./git-test-helpers.ts";

const temp = useTempScope();

/**
 * What landing answers when it fast-forwarded to `sha`: on `main`, or with `integration` (the
 * user's repository is not bare) on `overseer/main`.
 */
const fastForwardTo = (sha: string, { integration = false } = {}) => ({
  kind: "landed",
  sha,
  branch: integration ? "overseer/main" : "main",
  integration,
  fastForward: true,
  method: "fast-forward",
});

for (const mergeMethod of ["merge-tree", "worktree"] as const) {
  describe(`landBranch (${mergeMethod})`, () => {
    it("fast-forwards when the target has not moved, and is idempotent", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "land");
      const task = await commitOnRemote(remote, "task/a", { "a.txt": "a\n" }, "task a");
      const result = await landOnMain(mirror, workDir, "task/a", { mergeMethod });
      expect(result).toEqual(fastForwardTo(task));
      expect(await headOf(remote, "main")).toBe(task);
      expect(await landOnMain(mirror, workDir, "task/a", { mergeMethod })).toEqual(result);
    });

    it("creates a merge commit when both sides moved", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "land");
      const task = await commitOnRemote(remote, "task/b", { "b.txt": "b\n" }, "task b");
      const other = await commitOnRemote(remote, "main", { "c.txt": "c\n" }, "main moved");
      const result = await landOnMain(mirror, workDir, "task/b", { mergeMethod });
      if (result.kind !== "landed") throw new Error(JSON.stringify(result));
      expect(result.fastForward).toBe(false);
      expect(await headOf(remote, "main")).toBe(result.sha);
      const raw = await git(remote, "cat-file", "commit", result.sha);
      expect(raw).toContain(`parent ${other}\nparent ${task}\n`);
      expect(raw).toMatch(/^committer Overseer Test <test@overseer\.local> /m);
      expect(raw.endsWith("\n\nMerge task/b")).toBe(true);
      expect(await git(remote, "show", `${result.sha}:b.txt`)).toBe("b");
      expect(await git(remote, "show", `${result.sha}:c.txt`)).toBe("c");
      expect((await fs.readdir(workDir).catch(() => [])).length).toBe(0);
    });

    it("reports a conflict with the files and leaves the target unchanged", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "land");
      const { main } = await conflictingEdits(remote, "task/c", { task: { "ok.txt": "ok\n" } });
      const result = await landOnMain(mirror, workDir, "task/c", { mergeMethod });
      expect(result.kind).toBe("conflict");
      if (result.kind !== "conflict") return;
      expect(result.files).toEqual(["shared.txt"]);
      expect(result.details).toContain("CONFLICT (content): Merge conflict in shared.txt");
      expect(await headOf(remote, "main")).toBe(main);
      expect((await fs.readdir(workDir).catch(() => [])).length).toBe(0);
    });
  });
}

describe("landBranch of an approved commit", () => {
  it("lands exactly sourceSha even if the branch moved after the review", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    const reviewed = await commitOnRemote(remote, "task/p", { "p.txt": "reviewed\n" }, "reviewed");
    await commitOnRemote(remote, "task/p", { "p.txt": "later\n" }, "pushed after review");
    const result = await landOnMain(mirror, workDir, "task/p", { sourceSha: reviewed });
    expect(result).toEqual(fastForwardTo(reviewed));
    await expect(landOnMain(mirror, workDir, "task/p", { sourceSha: "f".repeat(40) })).rejects.toThrow(
      GitInputError,
    );
    await expect(landOnMain(mirror, workDir, "task/none")).rejects.toThrow(/does not exist/);
  });
});

describe("landBranch races", () => {
  it("retries after losing the compare-and-swap and loses no commit", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    const task = await commitOnRemote(remote, "task/r", { "r.txt": "r\n" }, "task r");
    let concurrent = "";
    const attempts: number[] = [];
    const result = await landOnMain(mirror, workDir, "task/r", {
      onAttempt: async ({ attempt }: { attempt: number }) => {
        attempts.push(attempt);
        if (attempt === 1)
          concurrent = await commitOnRemote(remote, "main", { "x.txt": "x\n" }, "sneaked in");
      },
    });
    expect(attempts).toEqual([1, 2]);
    if (result.kind !== "landed") throw new Error(JSON.stringify(result));
    expect(result.fastForward).toBe(false);
    const main = (await headOf(remote, "main")) as string;
    expect(main).toBe(result.sha);
    expect(await isAncestor(remote, concurrent, main)).toBe(true);
    expect(await isAncestor(remote, task, main)).toBe(true);
  });

  it("gives up after maxAttempts without forcing", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    await commitOnRemote(remote, "task/s", { "s.txt": "s\n" }, "task s");
    let last = "";
    const error = await landOnMain(mirror, workDir, "task/s", {
      maxAttempts: 2,
      onAttempt: async ({ attempt }: { attempt: number }) => {
        last = await commitOnRemote(remote, "main", { [`n${attempt}.txt`]: "n\n" }, `move ${attempt}`);
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LandRaceError);
    expect(await headOf(remote, "main")).toBe(last);
  });

  it("lands two concurrent approvals from two workers in sequence", async () => {
    const { dir, remote, mirror, workDir } = await landingRig(temp, "land");
    const other = new RepoMirror({ dataDir: path.join(dir, "data2"), projectId: "land", remote });
    const a = await commitOnRemote(remote, "task/a", { "a.txt": "a\n" }, "task a");
    const b = await commitOnRemote(remote, "task/b", { "b.txt": "b\n" }, "task b");
    const c = await commitOnRemote(remote, "task/c", { "c.txt": "c\n" }, "task c");
    const results = await Promise.all([
      landOnMain(mirror, workDir, "task/a"),
      landOnMain(other, path.join(dir, "work2"), "task/b"),
      landOnMain(mirror, workDir, "task/c", { mergeMethod: "worktree" }),
    ]);
    for (const result of results) expect(result.kind).toBe("landed");
    const main = (await headOf(remote, "main")) as string;
    for (const sha of [a, b, c]) expect(await isAncestor(remote, sha, main)).toBe(true);
    await git(remote, "fsck", "--no-progress");
  });
});

/** The user's own (non-bare) repository in `dir`: a clone of a bare remote with `LANDING_FILES`. */
async function userClone(dir: string): Promise<string> {
  const bare = await makeRemote(dir, LANDING_FILES);
  await git(dir, "clone", "--quiet", bare, "user");
  return path.join(dir, "user");
}

describe("landBranch into a user's non-bare repository", () => {
  it("lands on overseer/<target> and leaves the working tree byte-identical", async () => {
    const { dir, remote: user, mirror, workDir } = await landingRig(temp, "land", userClone);
    // The user is mid-work: a dirty tracked file, a staged file, an untracked file.
    await fs.writeFile(path.join(user, "README.md"), "user is editing\n");
    await fs.writeFile(path.join(user, "staged.txt"), "staged\n");
    await git(user, "add", "staged.txt");
    await fs.writeFile(path.join(user, "untracked.txt"), "mine\n");
    const before = await snapshotTree(user, [".git"]);
    const indexBefore = await fs.readFile(path.join(user, ".git", "index"));
    const headBefore = await fs.readFile(path.join(user, ".git", "HEAD"), "utf8");
    const mainBefore = await headOf(user, "main");

    const wt = await mirror.addWorktree({ base: "main", path: path.join(dir, "job") });
    await fs.writeFile(path.join(wt.path, "feature.txt"), "feature\n");
    const sha = (await wt.commit({
      message: "feature",
      trailers: { Task: "T" },
      author: TEST_AUTHOR,
    })) as string;
    const { pushBranch } = await import("../src/index.ts");
    expect(await pushBranch(mirror, { branch: "task/f", sha, expectedOldSha: null })).toEqual({ ok: true });

    const result = await landOnMain(mirror, workDir, "task/f");
    expect(result).toEqual(fastForwardTo(sha, { integration: true }));
    expect(await headOf(user, "overseer/main")).toBe(sha);
    expect(await headOf(user, "main")).toBe(mainBefore);
    expect(await snapshotTree(user, [".git"])).toEqual(before);
    expect(await fs.readFile(path.join(user, ".git", "index"))).toEqual(indexBefore);
    expect(await fs.readFile(path.join(user, ".git", "HEAD"), "utf8")).toBe(headBefore);

    // The next approval builds on the integration branch, not on the user's main.
    const second = await commitOnRemote(user, "task/g", { "g.txt": "g\n" }, "task g", "overseer/main");
    const again = await landOnMain(mirror, workDir, "task/g");
    expect(again).toEqual(fastForwardTo(second, { integration: true }));
    expect(await snapshotTree(user, [".git"])).toEqual(before);
  });

  it("lands on the target itself when the user's repository has another branch checked out", async () => {
    const {
      remote: user,
      mirror,
      workDir,
    } = await landingRig(temp, "land", async (d) => {
      const clone = await userClone(d);
      await git(clone, "checkout", "--quiet", "-b", "wip");
      return clone;
    });
    const task = await commitOnRemote(user, "task/h", { "h.txt": "h\n" }, "task h");
    const result = await landOnMain(mirror, workDir, "task/h");
    expect(result).toEqual(fastForwardTo(task));
    expect(await headOf(user, "main")).toBe(task);
  });
});
