import { promises as fs } from "node:fs";
import path from "node:path";
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { GitError, pushBranch, RepoMirror, runGit } from "../src/index.ts";
import { localPush } from "../src/local-push.ts";
import { transferObjects } from "../src/object-transfer.ts";
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
 * The push to a local remote without git's transport (local-push.ts) at its edges: racing
 * pushers, a remote maintained while it is pushed to, remotes of unusual shapes and configs, and
 * a copy across file systems. Each case ends with what `git push` would have left.
 */

const temp = useTempScope();
const BRANCH = "overseer/task/T1";

async function mirrorOf(dir: string, remote: string, name = "data") {
  const mirror = new RepoMirror({ dataDir: path.join(dir, name), projectId: "p", remote });
  await mirror.ensure();
  const wt = await mirror.addWorktree({ base: "main", path: path.join(dir, `${name}-job`) });
  const commit = async (files: Record<string, string>) => {
    for (const [file, content] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(wt.path, file)), { recursive: true });
      await fs.writeFile(path.join(wt.path, file), content);
    }
    return (await wt.commit({ message: "work", trailers: { Task: "T1" }, author: TEST_AUTHOR })) as string;
  };
  return { mirror, commit };
}

async function rig(dir?: string) {
  const at = dir ?? (await temp.make());
  const remote = await makeRemote(at, { "a.txt": "a\n", "src/x.ts": "x\n" });
  return { dir: at, remote, ...(await mirrorOf(at, remote)) };
}

/** Lock files left anywhere under `dir`. */
async function locksUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true });
  return entries.filter((entry) => entry.endsWith(".lock"));
}

const push = (mirror: RepoMirror, sha: string, expectedOldSha: string | null, branch = BRANCH) =>
  pushBranch(mirror, { branch, sha, expectedOldSha });

describe("a push to a local remote without git's transport, at its edges", () => {
  it("lets exactly one of many racing pushers win each expected value", async () => {
    const { dir, remote, mirror: a, commit: commitA } = await rig();
    const { mirror: b, commit: commitB } = await mirrorOf(dir, remote, "other");
    let expected: string | null = null;
    for (let round = 0; round < 3; round++) {
      const shas = [
        await commitA({ [`a${round}.txt`]: `${round}\n` }),
        await commitB({ [`b${round}.txt`]: `${round}\n` }),
      ];
      const results = await Promise.all(
        [0, 1, 2, 3, 4, 5].map((i) => push(i % 2 === 0 ? a : b, shas[i % 2] as string, expected)),
      );
      const head = (await headOf(remote, BRANCH)) as string;
      expect(shas).toContain(head);
      // Both of the winner's pushes succeed (the second finds its commit there); the loser's fail.
      for (const [i, result] of results.entries()) {
        expect(result.ok).toBe(shas[i % 2] === head);
        if (!result.ok) expect(result).toMatchObject({ reason: "stale", actualSha: head });
      }
      // The next round's commits do not descend from the head on the loser's side: the CAS is
      // no fast-forward check, as with git push --force-with-lease.
      expected = head;
    }
    await expectWhole(remote);
    expect(await locksUnder(remote)).toEqual([]);
  });

  it("keeps the remote whole while git gc, repack and pack-refs run in it during pushes", async () => {
    const { remote, mirror, commit } = await rig();
    let done = false;
    const maintenance = (async () => {
      const steps = [
        ["pack-refs", "--all"],
        ["repack", "-adq"],
        ["gc", "--quiet"],
        ["pack-refs", "--all", "--prune"],
      ];
      for (let i = 0; !done; i++) {
        await runGit(steps[i % steps.length] as string[], { cwd: remote, okExitCodes: [1, 128] });
      }
    })();
    let expected: string | null = null;
    try {
      for (let i = 0; i < 12; i++) {
        const sha = await commit({ [`f${i}.txt`]: `${i}\n`, "src/x.ts": `x${i}\n` });
        expect(await push(mirror, sha, expected)).toEqual({ ok: true });
        expect(await headOf(remote, BRANCH)).toBe(sha);
        expected = sha;
      }
    } finally {
      done = true;
      await maintenance;
    }
    await expectWhole(remote);
    expect(await locksUnder(remote)).toEqual([]);
  });

  it("copies across file systems byte for byte, read-only as git writes loose objects", async () => {
    const dir = await fs.mkdtemp(path.join("/dev/shm", "overseer-local-push-"));
    try {
      const remote = await makeRemote(dir, { "a.txt": "a\n" });
      const { mirror, commit } = await mirrorOf(await temp.make(), remote);
      const sha = await commit({ "b.txt": "b\n", "deep/c.txt": "c\n" });
      const transfer = transferObjects(mirror.gitDir, remote, sha, 100);
      expect(transfer?.copied).toHaveLength(5);
      for (const id of transfer?.copied ?? []) {
        const file = (gitDir: string) => path.join(gitDir, "objects", id.slice(0, 2), id.slice(2));
        expect(await fs.readFile(file(remote))).toEqual(await fs.readFile(file(mirror.gitDir)));
        const stat = await fs.stat(file(remote));
        expect(stat.mode & 0o777).toBe(0o444);
        expect(stat.ino).not.toBe((await fs.stat(file(mirror.gitDir))).ino);
      }
      expect(await fs.readdir(path.join(remote, "objects", sha.slice(0, 2)))).not.toContainEqual(
        expect.stringMatching(/^tmp_obj_/),
      );
      expect(await push(mirror, sha, null)).toEqual({ ok: true });
      await expectWhole(remote);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it("links objects read-only, so the remote cannot write through them into the mirror", async () => {
    const { remote, mirror, commit } = await rig();
    const sha = await commit({ "b.txt": "b\n" });
    expect(await push(mirror, sha, null)).toEqual({ ok: true });
    for (const id of [sha, await git(remote, "rev-parse", `${sha}:b.txt`)]) {
      const stat = await fs.stat(path.join(remote, "objects", id.slice(0, 2), id.slice(2)));
      expect(stat.mode & 0o222).toBe(0);
    }
  });

  it("leaves only objects, no ref change, when cut short between the copy and the ref update", async () => {
    const { remote, mirror, commit } = await rig();
    const sha = await commit({ "b.txt": "b\n" });
    const before = await git(remote, "for-each-ref");
    expect(transferObjects(mirror.gitDir, remote, sha, 100)?.copied).toHaveLength(3);
    expect(await git(remote, "for-each-ref")).toBe(before);
    await expectWhole(remote);
    // The push that follows finds the objects there and only moves the branch.
    expect(transferObjects(mirror.gitDir, remote, sha, 100)?.copied).toEqual([]);
    expect(await push(mirror, sha, null)).toEqual({ ok: true });
    await expectWhole(remote);
  });

  it("reaches a remote through a symlinked path", async () => {
    const dir = await temp.make();
    const real = await makeRemote(dir, { "a.txt": "a\n" });
    const link = path.join(dir, "link.git");
    await fs.symlink(real, link);
    const { mirror, commit } = await mirrorOf(dir, link);
    const sha = await commit({ "b.txt": "b\n" });
    const { result, processes } = await tracingGit(temp, () => push(mirror, sha, null));
    expect(result).toEqual({ ok: true });
    expect(processes.total).toBe(0);
    expect(await headOf(real, BRANCH)).toBe(sha);
    expect((await fs.lstat(link)).isSymbolicLink()).toBe(true);
    await expectWhole(real);
  });

  it("reads packed-refs with its header and peeled tag lines, and a branch many levels deep", async () => {
    const { remote, mirror, commit } = await rig();
    const main = (await headOf(remote, "main")) as string;
    await git(remote, "tag", "-a", "-m", "v1", "v1", main);
    const deep = "a/b/c/d/e/f/g/h/i/j/k";
    await git(remote, "update-ref", `refs/heads/${deep}`, main);
    await git(remote, "pack-refs", "--all");
    const packed = await fs.readFile(path.join(remote, "packed-refs"), "utf8");
    expect(packed).toMatch(/^# pack-refs with: .*peeled/);
    expect(packed).toMatch(/^\^[0-9a-f]{40}$/m);
    const sha = await commit({ "b.txt": "b\n" });
    expect(await push(mirror, sha, null, deep)).toMatchObject({
      ok: false,
      reason: "stale",
      actualSha: main,
    });
    expect(await push(mirror, sha, main, deep)).toEqual({ ok: true });
    expect(await headOf(remote, deep)).toBe(sha);
    expect(await git(remote, "rev-parse", "v1^{}")).toBe(main);
    await expectWhole(remote);
  });

  it("does as git push does with a symbolic ref or an empty directory where the branch goes", async () => {
    const { remote, mirror, commit } = await rig();
    const main = (await headOf(remote, "main")) as string;
    const sha = await commit({ "b.txt": "b\n" });
    // A symbolic ref: git push moves the ref it points to.
    await git(remote, "symbolic-ref", `refs/heads/${BRANCH}`, "refs/heads/main");
    expect(await push(mirror, sha, main)).toEqual({ ok: true });
    expect(await git(remote, "symbolic-ref", `refs/heads/${BRANCH}`)).toBe("refs/heads/main");
    expect(await headOf(remote, "main")).toBe(sha);
    // An empty directory in the way: git removes it and writes the ref.
    const other = "overseer/task/T2";
    await fs.mkdir(path.join(remote, "refs", "heads", other, "empty"), { recursive: true });
    expect(await push(mirror, sha, null, other)).toEqual({ ok: true });
    expect(await headOf(remote, other)).toBe(sha);
    await expectWhole(remote);
    expect(await locksUnder(remote)).toEqual([]);
  });

  it("writes the reflog of a bare remote that logs every ref update, as receive-pack does", async () => {
    for (const setting of ["\tlogAllRefUpdates = always\n", "\tlogallrefupdates\n"]) {
      const { remote, mirror, commit } = await rig();
      await fs.appendFile(path.join(remote, "config"), `[core]\n${setting}`);
      expect(await git(remote, "config", "--bool", "core.logAllRefUpdates").catch(() => "")).not.toBe(
        "false",
      );
      const sha = await commit({ "b.txt": "b\n" });
      expect(await push(mirror, sha, null)).toEqual({ ok: true });
      expect(await git(remote, "reflog", "show", "--format=%H %gs", `refs/heads/${BRANCH}`)).toBe(
        `${sha} push`,
      );
    }
  });

  it("leaves to git push a shared repository, however its config spells it", async () => {
    for (const setting of ["\tsharedRepository = group\n", "\tsharedrepository\n"]) {
      const { remote, mirror, commit } = await rig();
      await fs.appendFile(path.join(remote, "config"), `[core]\n${setting}`);
      const sha = await commit({ "b.txt": "b\n" });
      const { result, processes } = await tracingGit(temp, () => push(mirror, sha, null));
      expect(result).toEqual({ ok: true });
      expect(processes.commands).toContain("push");
      const stat = await fs.stat(path.join(remote, "objects", sha.slice(0, 2)));
      expect(stat.mode & 0o070).toBe(0o070);
    }
  });

  it("leaves to git push a working copy with linked worktrees, and a SHA-256 remote", async () => {
    const dir = await temp.make();
    const bare = await makeRemote(dir, { "a.txt": "a\n" });
    const user = path.join(dir, "user");
    await git(dir, "clone", "--quiet", bare, user);
    await git(user, "worktree", "add", "--quiet", "-b", "side", path.join(dir, "side"));
    const { mirror, commit } = await mirrorOf(dir, user);
    const sha = await commit({ "b.txt": "b\n" });
    const { result, processes } = await tracingGit(temp, () => push(mirror, sha, null));
    expect(result).toEqual({ ok: true });
    expect(processes.commands).toContain("push");
    // The branch a linked worktree has checked out is git's to refuse.
    const side = (await headOf(user, "side")) as string;
    expect(await push(mirror, sha, side, "side").catch((e: unknown) => e)).toBeInstanceOf(GitError);
    expect(await headOf(user, "side")).toBe(side);

    const sha256 = path.join(dir, "sha256.git");
    await git(dir, "init", "--quiet", "--bare", "--object-format=sha256", sha256);
    const other = new RepoMirror({ dataDir: path.join(dir, "data256"), projectId: "p", remote: sha256 });
    await other.ensure();
    // The mirror of an empty SHA-256 remote holds SHA-1 objects (a commit copied in from the
    // other mirror): none of them may land in the remote's store.
    const source = path.join(mirror.gitDir, "objects");
    const target = path.join(other.gitDir, "objects");
    await fs.cp(source, target, { recursive: true, force: false, errorOnExist: false });
    const ref = `refs/heads/${BRANCH}`;
    expect(await localPush(other, { ref, sha, expectedOldSha: null, maxObjects: 100 })).toBeNull();
    expect(await fs.readdir(path.join(sha256, "refs", "heads"))).toEqual([]);
    expect((await fs.readdir(path.join(sha256, "objects"))).sort()).toEqual(["info", "pack"]);
  });
  it("leaves to git a branch that is an old-style symlink symbolic ref", async () => {
    const { remote, mirror, commit } = await rig();
    const main = (await headOf(remote, "main")) as string;
    const file = path.join(remote, "refs", "heads", ...BRANCH.split("/"));
    await fs.mkdir(path.dirname(file), { recursive: true });
    // git reads a symlink under refs/ whose target starts with refs/ as a symbolic ref.
    await fs.symlink("refs/heads/main", file);
    expect(await git(remote, "symbolic-ref", `refs/heads/${BRANCH}`)).toBe("refs/heads/main");
    const sha = await commit({ "b.txt": "b\n" });
    // git's receive-pack refuses the update ("failed to update ref"); the symlink stays.
    const result = await push(mirror, sha, null).catch((e: unknown) => e);
    expect(result).toBeInstanceOf(GitError);
    expect((await fs.lstat(file)).isSymbolicLink()).toBe(true);
    expect(await headOf(remote, "main")).toBe(main);
    expect(await locksUnder(remote)).toEqual([]);
  });

  it("fails as git push fails where the ref's lock file cannot be made", async () => {
    const { remote, mirror, commit } = await rig();
    // A name of 252 bytes: the ref file fits in a directory entry, its `.lock` does not.
    const branch = `overseer/${"n".repeat(252)}`;
    const sha = await commit({ "b.txt": "b\n" });
    const error = await push(mirror, sha, null, branch).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect(await headOf(remote, branch)).toBeNull();
    await expectWhole(remote);
  });
  it("links objects as fresh as git writes them, so a gc of the remote meanwhile spares them", async () => {
    const { remote, mirror, commit } = await rig();
    const sha = await commit({ "b.txt": "b\n" });
    // The mirror's files are old (a blob an earlier run wrote weeks ago, an old mirror).
    const month = new Date(Date.now() - 30 * 24 * 3600 * 1000);
    const objects = path.join(mirror.gitDir, "objects");
    for (const entry of await fs.readdir(objects, { recursive: true })) {
      if (/^[0-9a-f]{2}\/[0-9a-f]{38}$/.test(entry)) await fs.utimes(path.join(objects, entry), month, month);
    }
    expect(transferObjects(mirror.gitDir, remote, sha, 100)?.copied).toHaveLength(3);
    // What a `git gc` started in the remote before the ref moves prunes: unreachable loose
    // objects older than its grace period (two weeks), which a push's objects never are.
    await git(remote, "prune", "--expire=2.weeks.ago");
    expect(await git(remote, "cat-file", "-t", sha)).toBe("commit");
    expect(await push(mirror, sha, null)).toEqual({ ok: true });
    await expectWhole(remote);
  });
  it("leaves to git a branch the working copy is rebasing, which git counts as checked out", async () => {
    const dir = await temp.make();
    const bare = await makeRemote(dir, { "a.txt": "a\n" });
    const user = path.join(dir, "user");
    await git(dir, "clone", "--quiet", bare, user);
    const { mirror, commit } = await mirrorOf(dir, user);
    const first = await commit({ "b.txt": "b\n" });
    expect(await push(mirror, first, null)).toEqual({ ok: true });
    // The user checks the branch out and stops an interactive rebase of it: HEAD is detached.
    await git(user, "checkout", "--quiet", BRANCH);
    await runGit(["rebase", "--quiet", "-i", "main"], {
      cwd: user,
      env: { GIT_SEQUENCE_EDITOR: "sed -i '1i break'", GIT_EDITOR: "true" },
    });
    expect(await fs.readFile(path.join(user, ".git", "HEAD"), "utf8")).not.toMatch(/^ref:/);
    const second = await commit({ "c.txt": "c\n" });
    const error = await push(mirror, second, first).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect(String((error as GitError).message)).toMatch(/checked out/);
    expect(await headOf(user, BRANCH)).toBe(first);
  });
  it("leaves to git a working copy whose HEAD is a symlink, which git reads as a symbolic ref", async () => {
    const dir = await temp.make();
    const bare = await makeRemote(dir, { "a.txt": "a\n" });
    const user = path.join(dir, "user");
    await git(dir, "clone", "--quiet", bare, user);
    const head = path.join(user, ".git", "HEAD");
    await fs.rm(head);
    await fs.symlink("refs/heads/main", head);
    expect(await git(user, "symbolic-ref", "HEAD")).toBe("refs/heads/main");
    const { mirror, commit } = await mirrorOf(dir, user);
    const main = (await headOf(user, "main")) as string;
    const sha = await commit({ "b.txt": "b\n" });
    const error = await push(mirror, sha, main, "main").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect(String((error as GitError).message)).toMatch(/checked out/);
    expect(await headOf(user, "main")).toBe(main);
  });
  it("fails as git push fails on a remote git does not take for a repository", async () => {
    for (const arrange of [
      (remote: string) => fs.rm(path.join(remote, "HEAD")),
      (remote: string) => fs.rm(path.join(remote, "refs"), { recursive: true }),
      (remote: string) => git(remote, "config", "core.repositoryFormatVersion", "2"),
    ]) {
      const { remote, mirror, commit } = await rig();
      const sha = await commit({ "b.txt": "b\n" });
      await arrange(remote);
      const error = await push(mirror, sha, null).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GitError);
      expect(
        await fs.access(path.join(remote, "refs", "heads", ...BRANCH.split("/"))).catch(() => "none"),
      ).toBe("none");
    }
  });
  it("never copies an object whose content does not match its id into the remote", async () => {
    const { remote, mirror, commit } = await rig();
    const sha = await commit({ "b.txt": "right\n" });
    const blob = await git(mirror.gitDir, "rev-parse", `${sha}:b.txt`);
    // The mirror's file holds another, well-formed blob (a torn write, a bad disk).
    const file = path.join(mirror.gitDir, "objects", blob.slice(0, 2), blob.slice(2));
    await fs.chmod(file, 0o644);
    await fs.writeFile(file, deflateSync(Buffer.from("blob 6\0wrong\n")));
    const result = await push(mirror, sha, null).catch((e: unknown) => e);
    expect(result).toBeInstanceOf(GitError);
    expect(await headOf(remote, BRANCH)).toBeNull();
    await expect(fs.access(path.join(remote, "objects", blob.slice(0, 2), blob.slice(2)))).rejects.toThrow();
    await expectWhole(remote);
  });
});
