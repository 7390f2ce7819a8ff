/**
 * What a repository is when a project is registered (repo-kind.ts): a URL is `remote`, a local
 * bare repository `bare`, anything with a working tree (or the branch checked out in a linked
 * worktree) `working_copy`; and the integration branch a working copy's work lands on is
 * created once at the branch's head, touching nothing but that ref.
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { plainBareWithoutCheckouts } from "../src/checked-out-branches.ts";
import { createIntegrationBranch, repoKindOf } from "../src/index.ts";
import { git, headOf, makeRemote, snapshotTree, useTempScope } from "./git-test-helpers.ts";

const temp = useTempScope();

describe("repoKindOf", () => {
  it("answers remote for URLs without touching the network", async () => {
    expect(await repoKindOf("https://example.invalid/x.git", "main")).toBe("remote");
    expect(await repoKindOf("git@example.invalid:x.git", "main")).toBe("remote");
  });

  it("tells a bare repository from a working copy, whatever is checked out, and a bare one with a linked worktree on the branch", async () => {
    const dir = await temp.make();
    const bare = await makeRemote(dir, { "a.txt": "a\n" });
    expect(await repoKindOf(bare, "main")).toBe("bare");
    await git(dir, "clone", "--quiet", bare, "user");
    const user = path.join(dir, "user");
    expect(await repoKindOf(user, "main")).toBe("working_copy");
    await git(user, "checkout", "--quiet", "-b", "wip");
    expect(await repoKindOf(user, "main")).toBe("working_copy");
    await git(bare, "worktree", "add", "--quiet", path.join(dir, "linked"), "main");
    expect(await repoKindOf(bare, "main")).toBe("working_copy");
  });

  it("fails on a local path that is not a repository", async () => {
    const dir = await temp.make();
    await expect(repoKindOf(path.join(dir, "nothing"), "main")).rejects.toThrow();
  });
});

describe("plainBareWithoutCheckouts", () => {
  it("is true only for a bare repository whose files say so and that has no linked worktree", async () => {
    const dir = await temp.make();
    const bare = await makeRemote(dir, { "a.txt": "a\n" });
    expect(await plainBareWithoutCheckouts(bare)).toBe(true);
    // A later `bare = false` wins in git; anything git would read otherwise is not guessed at.
    const config = await fs.readFile(path.join(bare, "config"), "utf8");
    for (const [edited, answer] of [
      [`${config}[core]\n\tbare = false\n`, false],
      [`${config}[remote "origin"]\n\turl = /x\n`, true],
      [`${config}[include]\n\tpath = other\n`, false],
      [`${config}\tworktree = /tmp\n`, false],
      [`${config}# a comment\n`, false],
      [config.replace("bare = true", "bare"), false],
    ] as const) {
      await fs.writeFile(path.join(bare, "config"), edited);
      expect(await plainBareWithoutCheckouts(bare), edited).toBe(answer);
    }
    await fs.writeFile(path.join(bare, "config"), config);
    await git(dir, "clone", "--quiet", bare, "user");
    expect(await plainBareWithoutCheckouts(path.join(dir, "user"))).toBe(false);
    await git(bare, "worktree", "add", "--quiet", path.join(dir, "linked"), "main");
    expect(await plainBareWithoutCheckouts(bare)).toBe(false);
    expect(await plainBareWithoutCheckouts(path.join(dir, "nothing"))).toBe(false);
  });
});

describe("createIntegrationBranch", () => {
  it("creates overseer/main at main once, never moves it again, and leaves tree, index and HEAD alone", async () => {
    const dir = await temp.make();
    const bare = await makeRemote(dir, { "a.txt": "a\n" });
    await git(dir, "clone", "--quiet", bare, "user");
    const user = path.join(dir, "user");
    await fs.writeFile(path.join(user, "a.txt"), "edited\n");
    await git(user, "add", "a.txt");
    const tree = await snapshotTree(user, [".git"]);
    const index = await fs.readFile(path.join(user, ".git", "index"));
    const main = await headOf(user, "main");

    expect(await createIntegrationBranch(user, "main", "overseer/main")).toBe(true);
    expect(await headOf(user, "overseer/main")).toBe(main);
    expect(await snapshotTree(user, [".git"])).toEqual(tree);
    expect(await fs.readFile(path.join(user, ".git", "index"))).toEqual(index);
    expect(await git(user, "symbolic-ref", "HEAD")).toBe("refs/heads/main");

    await git(user, "commit", "--quiet", "-m", "user's own commit");
    expect(await createIntegrationBranch(user, "main", "overseer/main")).toBe(false);
    expect(await headOf(user, "overseer/main")).toBe(main);
    expect(await createIntegrationBranch(user, "nope", "overseer/nope")).toBe(false);
    expect(await headOf(user, "overseer/nope")).toBeNull();
  });
});
