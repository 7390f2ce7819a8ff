import { promises as fs } from "node:fs";
import { describe, expect, it } from "vitest";
import { mergeMainInto, pushBranch } from "../src/index.ts";
import {
  commitOnRemote,
  conflictingEdits,
  git,
  headOf,
  landingRig,
  landOnMain,
  TEST_AUTHOR,
  useTempScope,
} from "./git-test-helpers.ts";

const temp = useTempScope();

const parentsOf = async (repo: string, sha: string) =>
  (await git(repo, "rev-list", "--parents", "-n", "1", sha)).split(" ").slice(1);

describe("landBranch with strategy rebase", () => {
  it("fast-forwards when main has not moved (no check, no new commit)", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "strategies");
    const task = await commitOnRemote(remote, "task/ff", { "a.txt": "a\n" }, "task ff");
    const checked: string[] = [];
    const result = await landOnMain(mirror, workDir, "task/ff", {
      strategy: "rebase",
      check: async (sha: string) => {
        checked.push(sha);
        return { ok: true };
      },
    });
    expect(result).toMatchObject({ kind: "landed", sha: task, fastForward: true, method: "fast-forward" });
    expect(checked).toEqual([]);
    expect(await headOf(remote, "main")).toBe(task);
  });

  it("replays the task's commits onto the moved main: linear history, authors kept", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "strategies");
    await commitOnRemote(remote, "task/r", { "r1.txt": "one\n" }, "task r first");
    await commitOnRemote(remote, "task/r", { "r2.txt": "two\n" }, "task r second");
    const main = await commitOnRemote(remote, "main", { "m.txt": "main\n" }, "main moved");
    const result = await landOnMain(mirror, workDir, "task/r", { strategy: "rebase" });
    if (result.kind !== "landed") throw new Error(JSON.stringify(result));
    expect(result).toMatchObject({ fastForward: false, method: "rebase" });
    expect(await headOf(remote, "main")).toBe(result.sha);
    // Two commits on top of main, each with one parent; the subjects are the task's own.
    const log = (await git(remote, "log", "--format=%s|%P", `${main}..${result.sha}`)).split("\n");
    expect(log.map((l) => l.split("|")[0])).toEqual(["task r second", "task r first"]);
    expect(log.every((l) => (l.split("|")[1] ?? "").split(" ").length === 1)).toBe(true);
    expect(await parentsOf(remote, (await git(remote, "rev-parse", `${result.sha}~1`)).trim())).toEqual([
      main,
    ]);
    for (const [file, content] of [
      ["r1.txt", "one"],
      ["r2.txt", "two"],
      ["m.txt", "main"],
    ] as const) {
      expect(await git(remote, "show", `${result.sha}:${file}`)).toBe(content);
    }
    expect((await fs.readdir(workDir).catch(() => [])).length).toBe(0);
  });

  it("a conflicting rebase is a conflict with the files, and main is unchanged", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "strategies");
    const { main } = await conflictingEdits(remote, "task/c");
    const result = await landOnMain(mirror, workDir, "task/c", { strategy: "rebase" });
    expect(result).toMatchObject({ kind: "conflict", files: ["shared.txt"], method: "rebase" });
    if (result.kind === "conflict") expect(result.details).toContain("shared.txt");
    expect(await headOf(remote, "main")).toBe(main);
    expect((await fs.readdir(workDir).catch(() => [])).length).toBe(0);
  });

  it("merges instead of replaying a branch that already merged main in", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "strategies");
    const { taskHead, main: main1 } = await conflictingEdits(remote, "task/m");
    await mirror.ensure();
    const prepared = await mergeMainInto(mirror, {
      head: taskHead,
      main: main1,
      message: "Merge main",
      author: TEST_AUTHOR,
      workDir,
    });
    if (prepared.kind !== "merged") throw new Error("expected a merge");
    // Publish the prepared merge as the resolved task branch (markers kept: only the shape matters).
    expect(
      await pushBranch(mirror, { branch: "task/m", sha: prepared.sha, expectedOldSha: taskHead }),
    ).toMatchObject({
      ok: true,
    });
    await commitOnRemote(remote, "main", { "other.txt": "x\n" }, "main moved again");
    const result = await landOnMain(mirror, workDir, "task/m", { strategy: "rebase" });
    if (result.kind !== "landed") throw new Error(JSON.stringify(result));
    expect(result.method).toBe("merge");
    expect(await parentsOf(remote, result.sha)).toHaveLength(2);
  });
});

describe("landBranch check on the integrated tree", () => {
  for (const strategy of ["merge", "rebase"] as const) {
    it(`${strategy}: a passing check lands the commit it was given`, async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "strategies");
      await commitOnRemote(remote, "task/p", { "p.txt": "p\n" }, "task p");
      await commitOnRemote(remote, "main", { "q.txt": "q\n" }, "main moved");
      const checked: string[] = [];
      const result = await landOnMain(mirror, workDir, "task/p", {
        strategy,
        check: async (sha: string) => {
          checked.push(sha);
          return { ok: true };
        },
      });
      if (result.kind !== "landed") throw new Error(JSON.stringify(result));
      expect(checked).toEqual([result.sha]);
      expect(await headOf(remote, "main")).toBe(result.sha);
    });

    it(`${strategy}: a failing check lands nothing and returns its output`, async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "strategies");
      await commitOnRemote(remote, "task/f", { "f.txt": "f\n" }, "task f");
      const main = await commitOnRemote(remote, "main", { "g.txt": "g\n" }, "main moved");
      const result = await landOnMain(mirror, workDir, "task/f", {
        strategy,
        check: async (sha: string) => {
          // The integrated commit holds both sides and is in the mirror, not on the remote.
          expect(await mirror.git(["show", `${sha}:f.txt`])).toMatchObject({ stdout: "f\n" });
          expect(await mirror.git(["show", `${sha}:g.txt`])).toMatchObject({ stdout: "g\n" });
          return { ok: false, output: "1 test failed: g breaks f" };
        },
      });
      expect(result).toMatchObject({
        kind: "check_failed",
        output: "1 test failed: g breaks f",
        method: strategy,
      });
      expect(await headOf(remote, "main")).toBe(main);
    });
  }
});

for (const mergeMethod of ["merge-tree", "worktree"] as const) {
  describe(`mergeMainInto (${mergeMethod})`, () => {
    it("commits the merge with diff3 markers in the conflicted files, parents task then main", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "strategies");
      const { taskHead, main } = await conflictingEdits(remote, "task/x", {
        task: { "t.txt": "t\n" },
        main: { "m.txt": "m\n" },
      });
      await mirror.ensure();
      const result = await mergeMainInto(mirror, {
        head: taskHead,
        main,
        message: "Merge main into task/x",
        author: TEST_AUTHOR,
        workDir,
        mergeMethod,
      });
      if (result.kind !== "merged") throw new Error(JSON.stringify(result));
      expect(result.conflicts).toEqual(["shared.txt"]);
      const show = (file: string) => mirror.git(["show", `${result.sha}:${file}`]).then((r) => r.stdout);
      const shared = await show("shared.txt");
      expect(shared).toMatch(
        /^line 1\n<<<<<<< [^\n]*\nTASK\n\|\|\|\|\|\|\| [^\n]*\nline 2\n=======\nMAIN\n>>>>>>> [^\n]*\nline 3\n$/,
      );
      expect(await show("t.txt")).toBe("t\n");
      expect(await show("m.txt")).toBe("m\n");
      const parents = await mirror.git(["rev-list", "--parents", "-n", "1", result.sha]);
      expect(parents.stdout.trim().split(" ").slice(1)).toEqual([taskHead, main]);
      expect((await fs.readdir(workDir).catch(() => [])).length).toBe(0);
    });

    it("a clean merge has no conflicts; main already in the branch is up to date", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "strategies");
      const taskHead = await commitOnRemote(remote, "task/y", { "y.txt": "y\n" }, "task y");
      const main = await commitOnRemote(remote, "main", { "z.txt": "z\n" }, "main moved");
      await mirror.ensure();
      const opts = { message: "Merge", author: TEST_AUTHOR, workDir, mergeMethod };
      const result = await mergeMainInto(mirror, { ...opts, head: taskHead, main });
      expect(result).toMatchObject({ kind: "merged", conflicts: [] });
      if (result.kind !== "merged") return;
      expect(await mergeMainInto(mirror, { ...opts, head: result.sha, main })).toEqual({
        kind: "up-to-date",
      });
    });
  });
}
