import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type LandAttempt, RepoMirror } from "../src/index.ts";
import {
  commitOnRemote,
  expectLandedExactly,
  git,
  headOf,
  isAncestor,
  LANDING_FILES,
  landingRig,
  landOnMain,
  makeRemote,
  snapshotTree,
  tracingGit,
  useTempScope,
} from "./git-test-helpers.ts";
import { serveGitOverHttp } from "./http-remote.ts";

/**
 * `mirrorFirst`: the worker's landing tries the mirror as it is, however long ago it was
 * fetched, and only its compare-and-swap push may land from it; whatever moved since on the
 * remote (a person, another worker) is fetched and handled exactly as a fetch-first landing.
 */

const temp = useTempScope();

const pushedAttempts = () => {
  const attempts: LandAttempt[] = [];
  return { attempts, onAttempt: (attempt: LandAttempt) => void attempts.push(attempt) };
};

describe("landBranch mirrorFirst on a bare remote", () => {
  it("a conflicting commit a person made on main since the mirror's fetch: the conflict a fetch-first landing reports, nothing pushed", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    const base = await headOf(remote, "main");
    const taskHead = await commitOnRemote(remote, "task/c", { "shared.txt": "line 1\nTASK\nline 3\n" }, "c");
    await mirror.ensure();
    const moved = await commitOnRemote(remote, "main", { "shared.txt": "line 1\nPERSON\nline 3\n" }, "p");
    const { attempts, onAttempt } = pushedAttempts();
    const first = await landOnMain(mirror, workDir, "task/c", {
      sourceSha: taskHead,
      mirrorFirst: true,
      onAttempt,
    });
    // The unfetched attempt found no conflict on its stale main and lost its push; the conflict
    // comes from the fetched one, word for word what a landing that fetches first answers.
    expect(attempts.map((a) => [a.attempt, a.expectedOldSha])).toEqual([[1, base]]);
    expect(first).toMatchObject({ kind: "conflict", files: ["shared.txt"] });
    expect(await landOnMain(mirror, workDir, "task/c", { sourceSha: taskHead })).toEqual(first);
    expect(await headOf(remote, "main")).toBe(moved);
  });

  it("work the mirror shows as landed on a main a person reset since: lands it again", async () => {
    const { remote, mirror, workDir } = await landingRig(temp, "land");
    const before = (await headOf(remote, "main")) as string;
    const task = await commitOnRemote(remote, "task/r", { "r.txt": "r\n" }, "task r");
    await mirror.ensure();
    const landed = await landOnMain(mirror, workDir, "task/r", { sourceSha: task });
    expect(landed.kind).toBe("landed");
    await git(remote, "update-ref", "refs/heads/main", before);
    const again = await landOnMain(mirror, workDir, "task/r", { sourceSha: task, mirrorFirst: true });
    const main = await expectLandedExactly(remote, "main", task, before);
    expect(again).toMatchObject({ kind: "landed", sha: main, fastForward: true });
  });

  it("a main that moved since the mirror's fetch, non-conflicting: the lost push is fetched and both land", async () => {
    const { dir, remote, mirror, workDir } = await landingRig(temp, "land");
    const task = await commitOnRemote(remote, "task/m", { "m.txt": "m\n" }, "task m");
    await mirror.ensure();
    // Another worker lands meanwhile; this mirror never hears of it.
    const other = new RepoMirror({ dataDir: path.join(dir, "data2"), projectId: "land", remote });
    const theirs = await commitOnRemote(remote, "task/o", { "o.txt": "o\n" }, "task o");
    const otherLanded = await landOnMain(other, path.join(dir, "work2"), "task/o", { sourceSha: theirs });
    if (otherLanded.kind !== "landed") throw new Error(JSON.stringify(otherLanded));
    const { attempts, onAttempt } = pushedAttempts();
    const { result, processes } = await tracingGit(temp, () =>
      landOnMain(mirror, workDir, "task/m", { sourceSha: task, mirrorFirst: true, onAttempt }),
    );
    // The lost push re-read main (one fetch of that branch), which is all the next attempt needs.
    expect(processes.commands.filter((c) => c === "fetch")).toHaveLength(1);
    if (result.kind !== "landed") throw new Error(JSON.stringify(result));
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(attempts[1]?.expectedOldSha).toBe(otherLanded.sha);
    expect(await headOf(remote, "main")).toBe(result.sha);
    expect(await isAncestor(remote, otherLanded.sha, result.sha)).toBe(true);
    expect(await git(remote, "show", `${result.sha}:o.txt`)).toBe("o");
    expect(await git(remote, "show", `${result.sha}:m.txt`)).toBe("m");
  });
});

/** A user's own repository with main checked out (a clone of a bare remote with `LANDING_FILES`). */
async function userClone(dir: string): Promise<string> {
  const bare = await makeRemote(dir, LANDING_FILES);
  await git(dir, "clone", "--quiet", bare, "user");
  return path.join(dir, "user");
}

describe("landBranch mirrorFirst on a working copy (main checked out)", () => {
  it("creates the integration branch at main as the user has it now, never at the mirror's older main", async () => {
    const { remote: user, mirror, workDir } = await landingRig(temp, "land", userClone);
    const task = await commitOnRemote(user, "task/i", { "i.txt": "i\n" }, "task i");
    await mirror.ensure();
    await fs.writeFile(path.join(user, "person.txt"), "person\n");
    await git(user, "add", "person.txt");
    await git(user, "commit", "--quiet", "-m", "the person's own commit");
    const main = (await headOf(user, "main")) as string;
    const before = await snapshotTree(user, [".git"]);
    const result = await landOnMain(mirror, workDir, "task/i", {
      sourceSha: task,
      landing: "overseer/main",
      mirrorFirst: true,
    });
    if (result.kind !== "landed") throw new Error(JSON.stringify(result));
    expect(result).toMatchObject({ branch: "overseer/main", integration: true });
    const landed = (await headOf(user, "overseer/main")) as string;
    expect(landed).toBe(result.sha);
    expect(await git(user, "log", "-1", "--format=%P", landed)).toBe(main);
    expect(await git(user, "show", `${landed}:i.txt`)).toBe("i");
    expect(await headOf(user, "main")).toBe(main);
    expect(await snapshotTree(user, [".git"])).toEqual(before);
  });

  it("lands on an integration branch another worker moved: lost push, fetch, both there; the working tree untouched", async () => {
    const { dir, remote: user, mirror, workDir } = await landingRig(temp, "land", userClone);
    const a = await commitOnRemote(user, "task/a", { "a.txt": "a\n" }, "task a");
    const b = await commitOnRemote(user, "task/b", { "b.txt": "b\n" }, "task b");
    await landOnMain(mirror, workDir, "task/a", { sourceSha: a, landing: "overseer/main" });
    const other = new RepoMirror({ dataDir: path.join(dir, "data2"), projectId: "land", remote: user });
    const theirs = await commitOnRemote(user, "task/o", { "o.txt": "o\n" }, "task o", "overseer/main");
    await landOnMain(other, path.join(dir, "work2"), "task/o", {
      sourceSha: theirs,
      landing: "overseer/main",
    });
    const moved = (await headOf(user, "overseer/main")) as string;
    const before = await snapshotTree(user, [".git"]);
    const { attempts, onAttempt } = pushedAttempts();
    const result = await landOnMain(mirror, workDir, "task/b", {
      sourceSha: b,
      landing: "overseer/main",
      mirrorFirst: true,
      onAttempt,
    });
    if (result.kind !== "landed") throw new Error(JSON.stringify(result));
    expect(attempts.map((x) => x.attempt)).toEqual([1, 2]);
    expect(await isAncestor(user, moved, result.sha)).toBe(true);
    for (const name of ["a", "b", "o"])
      expect(await git(user, "show", `${result.sha}:${name}.txt`)).toBe(name);
    expect(await snapshotTree(user, [".git"])).toEqual(before);
  });

  it("still refuses to land on the checked-out branch itself", async () => {
    const { remote: user, mirror, workDir } = await landingRig(temp, "land", userClone);
    const task = await commitOnRemote(user, "task/k", { "k.txt": "k\n" }, "task k");
    await mirror.ensure();
    const mainBefore = await headOf(user, "main");
    await expect(
      landOnMain(mirror, workDir, "task/k", { sourceSha: task, mirrorFirst: true }),
    ).rejects.toThrow(/branch "main" is checked out in the working copy/);
    expect(await headOf(user, "main")).toBe(mainBefore);
  });
});

describe("landBranch mirrorFirst over smart HTTP (git http-backend)", () => {
  it("lands with no fetch when nothing moved, and after a person's commit fetches and merges", async () => {
    const dir = await temp.make();
    const remote = await makeRemote(dir, LANDING_FILES);
    const server = await serveGitOverHttp(dir);
    try {
      const mirror = new RepoMirror({
        dataDir: path.join(dir, "data"),
        projectId: "h",
        remote: server.url("remote.git"),
      });
      const workDir = path.join(dir, "work");
      const main = (await headOf(remote, "main")) as string;
      const one = await commitOnRemote(remote, "task/1", { "1.txt": "1\n" }, "task 1");
      const two = await commitOnRemote(remote, "task/2", { "2.txt": "2\n" }, "task 2");
      await mirror.ensure();
      const { result, processes } = await tracingGit(temp, () =>
        landOnMain(mirror, workDir, "task/1", { sourceSha: one, mirrorFirst: true }),
      );
      expect(result).toMatchObject({ kind: "landed", fastForward: true });
      const landed = await expectLandedExactly(remote, "main", one, main);
      expect(processes.commands).not.toContain("fetch");

      const person = await commitOnRemote(remote, "main", { "p.txt": "p\n" }, "a person's commit");
      // The mirror still has main at `landed` (its own push): the push is refused, then fetched.
      const { attempts, onAttempt } = pushedAttempts();
      const next = await landOnMain(mirror, workDir, "task/2", {
        sourceSha: two,
        mirrorFirst: true,
        onAttempt,
      });
      if (next.kind !== "landed") throw new Error(JSON.stringify(next));
      expect(attempts.map((a) => [a.attempt, a.expectedOldSha])).toEqual([
        [1, landed],
        [2, person],
      ]);
      expect(await headOf(remote, "main")).toBe(next.sha);
      expect(await git(remote, "show", `${next.sha}:p.txt`)).toBe("p");
      expect(await git(remote, "show", `${next.sha}:2.txt`)).toBe("2");
    } finally {
      await server.close();
    }
  });
});
