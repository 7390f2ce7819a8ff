import { promises as fs } from "node:fs";
import { describe, expect, it } from "vitest";
import { mergeMainInto, pushBranch } from "../src/index.ts";
import {
  commitOnRemote,
  conflictingEdits,
  expectLandedExactly,
  git,
  headOf,
  isAncestor,
  landingRig,
  landOnMain,
  TEST_AUTHOR,
  useTempScope,
} from "./git-test-helpers.ts";

const temp = useTempScope();

const parentsOf = async (repo: string, sha: string) =>
  (await git(repo, "rev-list", "--parents", "-n", "1", sha)).split(" ").slice(1);

for (const strategy of ["squash", "merge"] as const) {
  describe(`landBranch with strategy ${strategy}: only the reviewed head's tree lands`, () => {
    it("a rejected attempt on the task branch is never an ancestor of main, nor in any of its commits", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "strategies");
      const rejected = await commitOnRemote(
        remote,
        "task/r",
        { "r.txt": "first try\n", "rejected.txt": "what the reviewer refused\n" },
        "first attempt",
      );
      const reviewed = await commitOnRemote(
        remote,
        "task/r",
        { "r.txt": "second try\n", "rejected.txt": null },
        "redo",
      );
      const moved = await commitOnRemote(remote, "main", { "m.txt": "main\n" }, "main moved");
      const result = await landOnMain(mirror, workDir, "task/r", { strategy, sourceSha: reviewed });
      if (result.kind !== "landed") throw new Error(JSON.stringify(result));
      expect(result).toMatchObject({ method: strategy, fastForward: false });
      const main = (await headOf(remote, "main")) as string;
      for (const attempt of [rejected, reviewed]) expect(await isAncestor(remote, attempt, main)).toBe(false);
      expect(await git(remote, "log", "--format=%H", main, "--", "rejected.txt")).toBe("");
      expect(await git(remote, "show", `${main}:r.txt`)).toBe("second try");
      expect(await git(remote, "show", `${main}:m.txt`)).toBe("main");
      // One commit (squash) or a work commit and its merge (merge) on top of main.
      expect((await git(remote, "rev-list", `${moved}..${main}`)).split("\n")).toHaveLength(
        strategy === "squash" ? 1 : 2,
      );
      expect(await parentsOf(remote, main)).toHaveLength(strategy === "squash" ? 1 : 2);
      // The work commit carries the reviewed head's message and names it.
      const work = strategy === "squash" ? main : ((await parentsOf(remote, main))[1] as string);
      expect(
        await git(remote, "log", "-1", "--format=%s|%(trailers:key=Reviewed-head,valueonly)", work),
      ).toBe(`redo|${reviewed}`);
    });

    it("an unmoved main gets one commit with exactly the reviewed tree, checked by no one", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "strategies");
      const main = (await headOf(remote, "main")) as string;
      await commitOnRemote(remote, "task/ff", { "a.txt": "rejected\n" }, "rejected");
      const task = await commitOnRemote(remote, "task/ff", { "a.txt": "a\n" }, "task ff");
      const checked: string[] = [];
      const result = await landOnMain(mirror, workDir, "task/ff", {
        strategy,
        check: async (sha: string) => {
          checked.push(sha);
          return { ok: true };
        },
      });
      const landed = await expectLandedExactly(remote, "main", task, main);
      expect(result).toMatchObject({ kind: "landed", sha: landed, fastForward: true, method: strategy });
      expect(checked).toEqual([]);
    });

    it("a conflict is a conflict with the files, and main is unchanged", async () => {
      const { remote, mirror, workDir } = await landingRig(temp, "strategies");
      const { main } = await conflictingEdits(remote, "task/c");
      const result = await landOnMain(mirror, workDir, "task/c", { strategy });
      expect(result).toMatchObject({ kind: "conflict", files: ["shared.txt"], method: strategy });
      if (result.kind === "conflict") expect(result.details).toContain("shared.txt");
      expect(await headOf(remote, "main")).toBe(main);
      expect((await fs.readdir(workDir).catch(() => [])).length).toBe(0);
    });

    it("lands a branch that merged main in to resolve a conflict with the resolution", async () => {
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
      ).toMatchObject({ ok: true });
      await commitOnRemote(remote, "main", { "other.txt": "x\n" }, "main moved again");
      const result = await landOnMain(mirror, workDir, "task/m", { strategy });
      if (result.kind !== "landed") throw new Error(JSON.stringify(result));
      expect(await git(remote, "show", `${result.sha}:shared.txt`)).toBe(
        await git(remote, "show", `${prepared.sha}:shared.txt`),
      );
      expect(await isAncestor(remote, taskHead, result.sha)).toBe(false);
    });
  });
}

describe("landBranch check on the integrated tree", () => {
  for (const strategy of ["squash", "merge"] as const) {
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
