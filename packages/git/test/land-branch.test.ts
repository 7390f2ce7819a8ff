import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GitInputError, LandRaceError, RepoMirror } from "../src/index.ts";
import {
  commitOnRemote,
  conflictingEdits,
  expectLandedExactly,
  git,
  headOf,
  isAncestor,
  LANDING_FILES,
  landingRig,
  landOnMain,
  makeRemote,
  snapshotTree,
  TEST_AUTHOR,
  tracingGit,
  useTempScope,
} from "./git-test-helpers.ts";

const temp = useTempScope();

/**
 * What landing answers when the landing branch had not moved, so the reviewed tree landed as it
 * is: on `main`, or with `integration` (the user's repository is not bare) on `overseer/main`.
 */
const landedAsReviewed = (sha: string, { integration = false } = {}) => ({
  kind: "landed",
  sha,
  branch: integration ? "overseer/main" : "main",
  integration,
  fastForward: true,
  method: "squash",
});

for (const mergeMethod of ["merge-tree", "worktree"] as const) {
  describe(`landBranch (${mergeMethod})`, () => {
    it("lands the reviewed tree as one commit when the target has not moved, and is idempotent", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "land");
      const main = (await headOf(remote, "main")) as string;
      const task = await commitOnRemote(remote, "task/a", { "a.txt": "a\n" }, "task a");
      const result = await landOnMain(mirror, workDir, "task/a", { mergeMethod });
      const landed = await expectLandedExactly(remote, "main", task, main);
      expect(result).toEqual(landedAsReviewed(landed));
      expect(
        await git(remote, "log", "-1", "--format=%s|%(trailers:key=Reviewed-head,valueonly)", landed),
      ).toBe(`task a|${task}`);
      expect(await landOnMain(mirror, workDir, "task/a", { mergeMethod })).toEqual(result);
      expect(await headOf(remote, "main")).toBe(landed);
    });

    it("squashes onto a moved target: one commit holding both sides", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "land");
      const task = await commitOnRemote(remote, "task/b", { "b.txt": "b\n" }, "task b");
      const other = await commitOnRemote(remote, "main", { "c.txt": "c\n" }, "main moved");
      const result = await landOnMain(mirror, workDir, "task/b", { mergeMethod });
      if (result.kind !== "landed") throw new Error(JSON.stringify(result));
      expect(result).toMatchObject({ fastForward: false, method: "squash" });
      expect(await headOf(remote, "main")).toBe(result.sha);
      const raw = await git(remote, "cat-file", "commit", result.sha);
      expect(raw).toContain(`\nparent ${other}\nauthor `);
      expect(raw).toMatch(/^committer Overseer Test <test@overseer\.local> /m);
      expect(raw).toContain("\n\ntask b\n\nReviewed-head: ");
      expect(await git(remote, "show", `${result.sha}:b.txt`)).toBe("b");
      expect(await git(remote, "show", `${result.sha}:c.txt`)).toBe("c");
      expect(await isAncestor(remote, task, result.sha)).toBe(false);
      expect((await fs.readdir(workDir).catch(() => [])).length).toBe(0);
    });

    it("a reviewed-range merge: the reviewed tree on the branch point, merged into the moved target", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "land");
      const base = (await headOf(remote, "main")) as string;
      const task = await commitOnRemote(remote, "task/b", { "b.txt": "b\n" }, "task b");
      const other = await commitOnRemote(remote, "main", { "c.txt": "c\n" }, "main moved");
      const result = await landOnMain(mirror, workDir, "task/b", { mergeMethod, strategy: "merge" });
      if (result.kind !== "landed") throw new Error(JSON.stringify(result));
      expect(result).toMatchObject({ fastForward: false, method: "merge" });
      const raw = await git(remote, "cat-file", "commit", result.sha);
      expect(raw.endsWith("\n\nMerge task/b")).toBe(true);
      const [, work] = (await git(remote, "show", "-s", "--format=%P", result.sha)).split(" ");
      expect(raw).toContain(`parent ${other}\nparent ${work}\n`);
      expect(await git(remote, "show", "-s", "--format=%P|%T|%s", work as string)).toBe(
        `${base}|${await git(remote, "rev-parse", `${task}^{tree}`)}|task b`,
      );
      expect(await git(remote, "show", `${result.sha}:b.txt`)).toBe("b");
      expect(await git(remote, "show", `${result.sha}:c.txt`)).toBe("c");
      expect(await isAncestor(remote, task, result.sha)).toBe(false);
      // Redelivered: the work commit names the head, nothing is landed twice.
      expect(await landOnMain(mirror, workDir, "task/b", { mergeMethod, strategy: "merge" })).toMatchObject({
        kind: "landed",
        sha: result.sha,
      });
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
    const main = (await headOf(remote, "main")) as string;
    const reviewed = await commitOnRemote(remote, "task/p", { "p.txt": "reviewed\n" }, "reviewed");
    await commitOnRemote(remote, "task/p", { "p.txt": "later\n" }, "pushed after review");
    const result = await landOnMain(mirror, workDir, "task/p", { sourceSha: reviewed });
    expect(result).toEqual(landedAsReviewed(await expectLandedExactly(remote, "main", reviewed, main)));
    await expect(landOnMain(mirror, workDir, "task/p", { sourceSha: "f".repeat(40) })).rejects.toThrow(
      GitInputError,
    );
    await expect(landOnMain(mirror, workDir, "task/none")).rejects.toThrow(/does not exist/);
  });

  it("a redelivered approve lands once even after main moved over the landed lines", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    await commitOnRemote(remote, "task/q", { "shared.txt": "line 1\nTASK\nline 3\n" }, "task q");
    const first = await landOnMain(mirror, workDir, "task/q");
    expect(first.kind).toBe("landed");
    // Another task rewrites the line this one landed: a second landing would conflict.
    const moved = await commitOnRemote(remote, "main", { "shared.txt": "line 1\nLATER\nline 3\n" }, "later");
    expect(await landOnMain(mirror, workDir, "task/q")).toMatchObject({ kind: "landed", sha: moved });
    expect(await headOf(remote, "main")).toBe(moved);
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
    expect(await git(remote, "show", `${main}:r.txt`)).toBe("r");
    expect(await isAncestor(remote, task, main)).toBe(false);
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
    for (const name of ["a", "b", "c"]) {
      await commitOnRemote(remote, `task/${name}`, { [`${name}.txt`]: `${name}\n` }, `task ${name}`);
    }
    const results = await Promise.all([
      landOnMain(mirror, workDir, "task/a"),
      landOnMain(other, path.join(dir, "work2"), "task/b"),
      landOnMain(mirror, workDir, "task/c", { mergeMethod: "worktree" }),
    ]);
    for (const result of results) expect(result.kind).toBe("landed");
    const main = (await headOf(remote, "main")) as string;
    for (const name of ["a", "b", "c"]) expect(await git(remote, "show", `${main}:${name}.txt`)).toBe(name);
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

    const result = await landOnMain(mirror, workDir, "task/f", { landing: "overseer/main" });
    const landed = await expectLandedExactly(user, "overseer/main", sha, mainBefore as string);
    expect(result).toEqual(landedAsReviewed(landed, { integration: true }));
    expect(await headOf(user, "main")).toBe(mainBefore);
    expect(await snapshotTree(user, [".git"])).toEqual(before);
    expect(await fs.readFile(path.join(user, ".git", "index"))).toEqual(indexBefore);
    expect(await fs.readFile(path.join(user, ".git", "HEAD"), "utf8")).toBe(headBefore);

    // The next approval builds on the integration branch, not on the user's main.
    const second = await commitOnRemote(user, "task/g", { "g.txt": "g\n" }, "task g", "overseer/main");
    const again = await landOnMain(mirror, workDir, "task/g", { landing: "overseer/main" });
    const landedAgain = await expectLandedExactly(user, "overseer/main", second, landed);
    expect(again).toEqual(landedAsReviewed(landedAgain, { integration: true }));
    expect(await snapshotTree(user, [".git"])).toEqual(before);
  });

  it("refuses to land on the checked-out branch itself (a project recorded before repository kinds), naming the fix", async () => {
    const { remote: user, mirror, workDir } = await landingRig(temp, "land", userClone);
    const task = await commitOnRemote(user, "task/k", { "k.txt": "k\n" }, "task k");
    const mainBefore = await headOf(user, "main");
    await expect(landOnMain(mirror, workDir, "task/k")).rejects.toThrow(
      /branch "main" is checked out in the working copy .*overseer init --project ID --update.*overseer\/main/,
    );
    expect(await headOf(user, "main")).toBe(mainBefore);
    expect(await headOf(user, "task/k")).toBe(task);
  });

  it("refuses to land on a bare remote's branch checked out in a linked worktree of it", async () => {
    const { remote, mirror, workDir, dir } = await landingRig(temp, "land");
    await commitOnRemote(remote, "task/l", { "l.txt": "l\n" }, "task l");
    await git(remote, "worktree", "add", "--quiet", path.join(dir, "linked"), "main");
    const mainBefore = await headOf(remote, "main");
    await expect(landOnMain(mirror, workDir, "task/l")).rejects.toThrow(/branch "main" is checked out/);
    expect(await headOf(remote, "main")).toBe(mainBefore);
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
    const main = (await headOf(user, "main")) as string;
    const task = await commitOnRemote(user, "task/h", { "h.txt": "h\n" }, "task h");
    const result = await landOnMain(mirror, workDir, "task/h");
    expect(result).toEqual(landedAsReviewed(await expectLandedExactly(user, "main", task, main)));
  });
});

describe("landBranch with mirrorFirst (the mirror as it is, however old)", () => {
  it("lands from the mirror as it is, with no fetch, when nothing moved", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    const main = (await headOf(remote, "main")) as string;
    const task = await commitOnRemote(remote, "task/f", { "f.txt": "f\n" }, "task f");
    await mirror.ensure();
    // Only a fetch would bring this branch into the mirror.
    await commitOnRemote(remote, "unrelated", { "u.txt": "u\n" }, "unrelated");
    const attempts: number[] = [];
    const result = await landOnMain(mirror, workDir, "task/f", {
      sourceSha: task,
      mirrorFirst: true,
      onAttempt: ({ attempt }) => void attempts.push(attempt),
    });
    expect(result).toEqual(landedAsReviewed(await expectLandedExactly(remote, "main", task, main)));
    expect(attempts).toEqual([1]);
    expect((await mirror.branchHeads(["unrelated"])).get("unrelated")).toBeNull();
  });

  it("lands a one-commit task on an unmoved main with the push alone (the heads read from the mirror's files)", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    const main = (await headOf(remote, "main")) as string;
    const task = await commitOnRemote(remote, "task/p", { "p.txt": "p\n" }, "task p");
    await mirror.ensure();
    const { result, processes } = await tracingGit(temp, () =>
      landOnMain(mirror, workDir, "task/p", {
        sourceSha: task,
        mirrorFirst: true,
        mergeMethod: "merge-tree",
      }),
    );
    expect(result).toEqual(landedAsReviewed(await expectLandedExactly(remote, "main", task, main)));
    // The head's parent is main: no merge-base, and the trees and the head come with the reads,
    // from the ref files and the loose commits (loose-commit.ts). The remote is bare with no
    // linked worktree, which its files say: no worktree list. The landed commit is written into
    // the mirror's object store without a git process, and pushed to the local remote without
    // one either (local-push.ts).
    expect(processes.total).toBe(0);
  });

  it("refuses a sourceSha that names something other than a commit", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    await commitOnRemote(remote, "task/q", { "q.txt": "q\n" }, "task q");
    await mirror.ensure();
    const blob = await git(mirror.gitDir, "rev-parse", "task/q:q.txt");
    await expect(landOnMain(mirror, workDir, "task/q", { sourceSha: blob })).rejects.toThrow(
      /commit [0-9a-f]{40} is not on the remote/,
    );
    expect(await headOf(remote, "main")).not.toBeNull();
  });

  it("a stale mirror loses the compare-and-swap; the fetched attempt lands on the moved main", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    const task = await commitOnRemote(remote, "task/g", { "g.txt": "g\n" }, "task g");
    await mirror.ensure();
    const moved = await commitOnRemote(remote, "main", { "m.txt": "m\n" }, "main moved");
    const attempts: number[] = [];
    const result = await landOnMain(mirror, workDir, "task/g", {
      sourceSha: task,
      mirrorFirst: true,
      onAttempt: ({ attempt }) => void attempts.push(attempt),
    });
    expect(attempts).toEqual([1, 2]);
    if (result.kind !== "landed") throw new Error(JSON.stringify(result));
    expect(result.fastForward).toBe(false);
    expect(await headOf(remote, "main")).toBe(result.sha);
    expect(await git(remote, "cat-file", "commit", result.sha)).toContain(`\nparent ${moved}\n`);
    expect(await git(remote, "show", `${result.sha}:g.txt`)).toBe("g");
  });

  it("never reports a conflict the stale mirror shows but the remote no longer has", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    const { taskHead } = await conflictingEdits(remote, "task/h");
    await mirror.ensure();
    // Main takes its edit back: the task merges cleanly now.
    await commitOnRemote(remote, "main", { "shared.txt": LANDING_FILES["shared.txt"] }, "revert");
    const result = await landOnMain(mirror, workDir, "task/h", { sourceSha: taskHead, mirrorFirst: true });
    if (result.kind !== "landed") throw new Error(JSON.stringify(result));
    expect(await headOf(remote, "main")).toBe(result.sha);
    expect(await git(remote, "show", `${result.sha}:shared.txt`)).toBe("line 1\nTASK\nline 3");
  });
});
