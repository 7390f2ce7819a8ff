import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { disposeKeptAdmins, GitInputError, pushBranch, RepoMirror } from "../src/index.ts";
import {
  commitOnRemote,
  exists,
  git,
  headOf,
  makeRemote,
  runFixture,
  TEST_AUTHOR,
  tracingGit,
  useTempScope,
  waitForLine,
} from "./git-test-helpers.ts";

const temp = useTempScope();

async function setup() {
  const dir = await temp.make();
  const remote = await makeRemote(dir, { "README.md": "hello\n", "src/a.ts": "export const a = 1;\n" });
  const dataDir = path.join(dir, "data");
  return { dir, remote, dataDir, mirror: new RepoMirror({ dataDir, projectId: "demo", remote }) };
}

describe("RepoMirror.ensure", () => {
  it("clones a bare mirror with the heads refspec, then fetches and prunes", async () => {
    const { remote, dataDir, mirror } = await setup();
    await mirror.ensure();
    expect(mirror.gitDir).toBe(path.join(dataDir, "mirrors", "demo.git"));
    expect(await git(mirror.gitDir, "rev-parse", "--is-bare-repository")).toBe("true");
    expect(await git(mirror.gitDir, "config", "--get-all", "remote.origin.fetch")).toBe(
      "+refs/heads/*:refs/heads/*",
    );
    expect(await mirror.resolveRef("main")).toBe(await headOf(remote, "main"));

    const feature = await commitOnRemote(remote, "feature", { "b.txt": "b\n" }, "feature");
    const main2 = await commitOnRemote(remote, "main", { "README.md": "hello 2\n" }, "main 2");
    await mirror.ensure();
    expect(await mirror.resolveRef("feature")).toBe(feature);
    expect(await mirror.resolveRef("main")).toBe(main2);
    const tips = await mirror.branchTips(["main", "feature", "feature/none"]);
    expect(tips.get("main")).toEqual({
      sha: main2,
      tree: await git(mirror.gitDir, "rev-parse", "main^{tree}"),
    });
    expect(tips.get("feature")).toEqual({
      sha: feature,
      tree: await git(mirror.gitDir, "rev-parse", `${feature}^{tree}`),
    });
    expect(tips.get("feature/none")).toBeNull();

    await git(remote, "update-ref", "-d", "refs/heads/feature");
    await mirror.ensure();
    expect(await mirror.resolveRef("feature")).toBeNull();
    expect(await mirror.resolveRef(main2)).toBe(main2);
    expect(await mirror.resolveRef("0".repeat(40))).toBeNull();
    // Beside the mirror, only the record of its last sync (no lock or temp dir left).
    const leftovers = (await fs.readdir(path.join(dataDir, "mirrors"))).filter((n) => n !== "demo.git");
    expect(leftovers).toEqual(["demo.synced"]);
  });

  it("records when it last reflected the remote, for every RepoMirror of the same mirror (any process)", async () => {
    const { dataDir, remote, mirror } = await setup();
    expect(await mirror.syncedAt()).toBeNull();
    const before = Date.now();
    await mirror.ensure();
    const other = new RepoMirror({ dataDir, projectId: "demo", remote });
    expect(await other.syncedAt()).toBeGreaterThanOrEqual(before - 1);
    expect(await other.syncedAt()).toBeLessThanOrEqual(Date.now());
    const pushedAt = Date.now() - 30_000;
    await other.markSynced(pushedAt);
    expect(Math.abs(((await mirror.syncedAt()) as number) - pushedAt)).toBeLessThan(5);
  });

  it("follows a changed remote location", async () => {
    const { dir, dataDir, mirror } = await setup();
    await mirror.ensure();
    const other = await makeRemote(path.join(dir, "other"), { "x.txt": "x\n" });
    const moved = new RepoMirror({ dataDir, projectId: "demo", remote: other });
    await moved.ensure();
    expect(await git(moved.gitDir, "config", "--get", "remote.origin.url")).toBe(other);
    expect(await moved.resolveRef("main")).toBe(await headOf(other, "main"));
  });

  it("survives many concurrent ensure() calls in one process", async () => {
    const { remote, dataDir } = await setup();
    const mirrors = Array.from({ length: 3 }, () => new RepoMirror({ dataDir, projectId: "demo", remote }));
    await Promise.all(mirrors.flatMap((m) => [m.ensure(), m.ensure(), m.ensure()]));
    const head = await commitOnRemote(remote, "main", { "c.txt": "c\n" }, "c");
    await Promise.all(mirrors.flatMap((m) => [m.ensure(), m.ensure()]));
    expect(await mirrors[0]?.resolveRef("main")).toBe(head);
    await git(mirrors[0]?.gitDir ?? "", "fsck", "--no-progress", "--strict");
  });

  it("survives concurrent ensure() calls from two processes", async () => {
    const { remote, dataDir, mirror } = await setup();
    const children = [0, 1].map(() => runFixture("ensure-child.ts", [dataDir, "demo", remote, "4"]));
    try {
      await Promise.all(children.map((c) => waitForLine(c, "ready")));
      for (const child of children) child.stdin?.write("go\n");
      const results = await Promise.all(children);
      for (const result of results) {
        expect(result.stderr).toBe("");
        expect(result.exitCode).toBe(0);
        expect(result.stdout).toContain("done");
      }
    } finally {
      for (const child of children) child.kill("SIGKILL");
    }
    await git(mirror.gitDir, "fsck", "--no-progress", "--strict");
    expect(await mirror.resolveRef("main")).toBe(await headOf(remote, "main"));
    const entries = await fs.readdir(path.join(dataDir, "mirrors"));
    expect(entries.sort()).toEqual(["demo.git", "demo.synced"]);
  });

  it("keeps fetching correctly while pushes from the same mirror move its refs", async () => {
    const { dir, remote, mirror } = await setup();
    await mirror.ensure();
    const wt = await mirror.addWorktree({ base: "main", path: path.join(dir, "pusher") });
    for (let i = 0; i < 12; i++) {
      await fs.writeFile(path.join(wt.path, "n.txt"), `${i}\n`);
      const sha = (await wt.commit({ message: `n${i}`, trailers: {}, author: TEST_AUTHOR })) as string;
      const previous = await mirror.resolveRef("main");
      const [pushed] = await Promise.all([
        pushBranch(mirror, { branch: "main", sha, expectedOldSha: previous }),
        mirror.ensure(),
        mirror.ensure(),
      ]);
      expect(pushed).toEqual({ ok: true });
    }
    await mirror.ensure();
    expect(await mirror.resolveRef("main")).toBe(await headOf(remote, "main"));
    await wt.remove();
  });

  it("recovers from a crashed clone and from a git lock left by a killed fetch", async () => {
    const { dataDir, mirror, remote } = await setup();
    await fs.mkdir(path.join(dataDir, "mirrors", ".demo.git.tmp-deadbeef"), { recursive: true });
    await mirror.ensure();
    expect(await exists(path.join(dataDir, "mirrors", ".demo.git.tmp-deadbeef"))).toBe(false);

    const lock = path.join(mirror.gitDir, "refs", "heads", "main.lock");
    await fs.writeFile(lock, "");
    const old = new Date(Date.now() - 3_600_000);
    await fs.utimes(lock, old, old);
    const head = await commitOnRemote(remote, "main", { "d.txt": "d\n" }, "d");
    await mirror.ensure();
    expect(await mirror.resolveRef("main")).toBe(head);
  });

  it("reads the host's global config for remote commands only when hostGitConfig is set", async () => {
    const { dir, remote } = await setup();
    const home = path.join(dir, "home");
    await fs.mkdir(home);
    // A host-level rewrite, as a credential helper or proxy setting would be configured.
    await fs.writeFile(
      path.join(home, ".gitconfig"),
      `[url "${remote}"]\n\tinsteadOf = overseer-test://repo\n`,
    );
    const savedHome = process.env.HOME;
    process.env.HOME = home;
    try {
      const isolated = new RepoMirror({
        dataDir: path.join(dir, "d1"),
        projectId: "h",
        remote: "overseer-test://repo",
      });
      await expect(isolated.ensure()).rejects.toThrow(/overseer-test/);
      const hosted = new RepoMirror({
        dataDir: path.join(dir, "d2"),
        projectId: "h",
        remote: "overseer-test://repo",
        hostGitConfig: true,
      });
      await hosted.ensure();
      expect(await hosted.resolveRef("main")).toBe(await headOf(remote, "main"));
    } finally {
      process.env.HOME = savedHome;
    }
  });

  it("validates its options with the field named", () => {
    expect(() => new RepoMirror({ dataDir: "/tmp/x", projectId: "../evil", remote: "/tmp/r" })).toThrow(
      GitInputError,
    );
    expect(() => new RepoMirror({ dataDir: "/tmp/x", projectId: "ok", remote: "--upload-pack=x" })).toThrow(
      /remote/,
    );
  });
});

describe("worktrees", () => {
  it("adds a detached worktree at a branch or a sha and removes it", async () => {
    const { dir, mirror, remote } = await setup();
    await mirror.ensure();
    const main = await headOf(remote, "main");
    const wt = await mirror.addWorktree({
      base: "main",
      path: path.join(dir, "jobs", "j1"),
      branch: "overseer/task/S1",
    });
    expect(wt.baseSha).toBe(main);
    expect(wt.branch).toBe("overseer/task/S1");
    expect(await fs.readFile(path.join(wt.path, "src", "a.ts"), "utf8")).toBe("export const a = 1;\n");
    const dirs = wt.gitDirs();
    expect(dirs.commonDir).toBe(mirror.gitDir);
    expect(dirs.worktreeGitDir.startsWith(path.join(mirror.gitDir, "worktrees"))).toBe(true);
    expect(
      await git(wt.path, "--git-dir", dirs.worktreeGitDir, "symbolic-ref", "-q", "HEAD").catch(
        () => "detached",
      ),
    ).toBe("detached");

    const wt2 = await mirror.addWorktree({ base: main ?? "", path: path.join(dir, "jobs", "j2") });
    expect(wt2.baseSha).toBe(main);

    // A fetch updating a branch must not be refused because of the checkouts.
    await commitOnRemote(remote, "main", { "e.txt": "e\n" }, "e");
    await mirror.ensure();

    await wt.remove();
    await wt.remove();
    expect(await exists(wt.path)).toBe(false);
    expect(await exists(dirs.worktreeGitDir)).toBe(false);
    // A tampered checkout (the agent replaced .git) is still removed.
    await fs.rm(path.join(wt2.path, ".git"));
    await fs.mkdir(path.join(wt2.path, ".git"));
    await wt2.remove();
    expect(await exists(wt2.path)).toBe(false);
    expect(await exists(wt2.gitDirs().worktreeGitDir)).toBe(false);
  });

  it("keeps a removed worktree's admin directory, emptied and out of git's sight, for the mirror's next worktree", async () => {
    const { dir, mirror } = await setup();
    await mirror.ensure();
    const kept = async () => (await fs.readdir(mirror.gitDir)).filter((n) => n.startsWith(".worktree-kept-"));
    const first = await mirror.addWorktree({ base: "main", path: path.join(dir, "jobs", "k1") });
    const admin = first.gitDirs().worktreeGitDir;
    const inode = (await fs.stat(admin)).ino;
    await first.remove();
    expect(await exists(admin)).toBe(false);
    expect(await exists(first.path)).toBe(false);
    const [parked, ...more] = await kept();
    expect(more).toEqual([]);
    // Emptied but for its commondir, which every worktree of the mirror has alike.
    expect(await fs.readdir(path.join(mirror.gitDir, parked ?? ""))).toEqual(["commondir"]);
    expect(await git(mirror.gitDir, "worktree", "list", "--porcelain")).not.toContain(first.path);

    const second = await mirror.addWorktree({ base: "main", path: path.join(dir, "jobs", "k2") });
    const { worktreeGitDir } = second.gitDirs();
    expect((await fs.stat(worktreeGitDir)).ino).toBe(inode);
    expect(await fs.readFile(path.join(worktreeGitDir, "commondir"), "utf8")).toBe("../..\n");
    expect(await fs.readFile(path.join(worktreeGitDir, "gitdir"), "utf8")).toBe(
      `${path.join(second.path, ".git")}\n`,
    );
    expect(await kept()).toEqual([]);
    expect(await fs.readFile(path.join(second.path, "src", "a.ts"), "utf8")).toBe("export const a = 1;\n");
    const status = await git(
      second.path,
      "--git-dir",
      worktreeGitDir,
      "--work-tree",
      second.path,
      "status",
      "--porcelain",
    );
    expect(status).toBe("");
    await git(mirror.gitDir, "worktree", "prune");
    expect(await exists(worktreeGitDir)).toBe(true);
    await second.remove();

    // A kept admin directory written to since it was kept (a stray lock file) is not used.
    const [stale] = await kept();
    await fs.writeFile(path.join(mirror.gitDir, stale ?? "", "index.lock"), "");
    const third = await mirror.addWorktree({ base: "main", path: path.join(dir, "jobs", "k3") });
    expect(await kept()).toEqual([]);
    expect((await fs.readdir(third.gitDirs().worktreeGitDir)).sort()).toEqual([
      "HEAD",
      "commondir",
      "gitdir",
      "index",
    ]);
    await third.remove();
    // A stopping worker removes the kept ones.
    expect(await kept()).toHaveLength(1);
    await disposeKeptAdmins();
    expect(await kept()).toEqual([]);
  });

  it("refuses an unknown base and a non-empty target", async () => {
    const { dir, mirror } = await setup();
    await mirror.ensure();
    await expect(mirror.addWorktree({ base: "no-such-branch", path: path.join(dir, "w") })).rejects.toThrow(
      /GitError|invalid reference|no-such-branch/,
    );
    await fs.mkdir(path.join(dir, "busy"));
    await fs.writeFile(path.join(dir, "busy", "f"), "x");
    await expect(mirror.addWorktree({ base: "main", path: path.join(dir, "busy") })).rejects.toThrow(
      /already exists/,
    );
  });

  it("checks a commit out in one git process: a linked worktree git lists, with a clean status", async () => {
    const { dir, mirror, remote } = await setup();
    const head = await commitOnRemote(remote, "main", { "deep/x/y.txt": "y\n" }, "more");
    await mirror.ensure();
    const { result: wt, processes } = await tracingGit(temp, () =>
      mirror.addWorktree({ base: head, path: path.join(dir, "jobs", "one") }),
    );
    expect(processes).toEqual({ commands: ["read-tree"], total: 1 });
    expect(wt.baseSha).toBe(head);
    expect(await wt.head()).toBe(head);
    expect(await fs.readFile(path.join(wt.path, "deep", "x", "y.txt"), "utf8")).toBe("y\n");
    const { worktreeGitDir } = wt.gitDirs();
    const inTree = (...args: string[]) =>
      git(wt.path, "--git-dir", worktreeGitDir, "--work-tree", wt.path, ...args);
    expect(await inTree("status", "--porcelain", "--untracked-files=all")).toBe("");
    expect(await inTree("rev-parse", "HEAD")).toBe(head);
    const listed = await git(mirror.gitDir, "worktree", "list", "--porcelain");
    expect(listed).toContain(`worktree ${wt.path}\nHEAD ${head}\ndetached`);
    // git's own prune keeps it; the removal leaves nothing for git to list.
    await git(mirror.gitDir, "worktree", "prune");
    expect(await exists(worktreeGitDir)).toBe(true);
    await wt.remove();
    expect(await git(mirror.gitDir, "worktree", "list", "--porcelain")).not.toContain(wt.path);
  });

  it("refuses a tree or an unknown commit and leaves no worktree behind", async () => {
    const { dir, mirror } = await setup();
    await mirror.ensure();
    const tree = await git(mirror.gitDir, "rev-parse", "main^{tree}");
    for (const base of [tree, "0".repeat(40)]) {
      const target = path.join(dir, "bad");
      await expect(mirror.addWorktree({ base, path: target })).rejects.toThrow(/Not a valid object name/);
      expect(await exists(target)).toBe(false);
    }
    expect(await fs.readdir(path.join(mirror.gitDir, "worktrees")).catch(() => [])).toEqual([]);
    expect((await fs.readdir(mirror.gitDir)).filter((name) => name.startsWith(".worktree-"))).toEqual([]);
  });

  it("leaves per-worktree config layouts to git worktree add", async () => {
    const { dir, mirror } = await setup();
    await mirror.ensure();
    await git(mirror.gitDir, "config", "core.repositoryFormatVersion", "1");
    await git(mirror.gitDir, "config", "extensions.worktreeConfig", "true");
    const { result: wt, processes } = await tracingGit(temp, () =>
      mirror.addWorktree({ base: "main", path: path.join(dir, "cfg") }),
    );
    expect(processes.commands).toEqual(["rev-parse", "worktree add"]);
    expect(wt.baseSha).toBe(await headOf(mirror.gitDir, "main"));
    expect(await fs.readFile(path.join(wt.path, "README.md"), "utf8")).toBe("hello\n");
    await wt.remove();
  });

  it("prunes worktrees whose directories vanished", async () => {
    const { dir, mirror } = await setup();
    await mirror.ensure();
    const wt = await mirror.addWorktree({ base: "main", path: path.join(dir, "gone") });
    await fs.rm(wt.path, { recursive: true });
    await mirror.pruneWorktrees();
    expect(await exists(wt.gitDirs().worktreeGitDir)).toBe(false);
  });

  it("adds worktrees concurrently with prune without losing any", async () => {
    const { dir, mirror } = await setup();
    await mirror.ensure();
    const adds = Array.from({ length: 6 }, (_, i) =>
      mirror.addWorktree({ base: "main", path: path.join(dir, "c", `w${i}`) }),
    );
    const [trees] = await Promise.all([Promise.all(adds), mirror.pruneWorktrees(), mirror.pruneWorktrees()]);
    for (const wt of trees) expect(await exists(wt.gitDirs().worktreeGitDir)).toBe(true);
    await Promise.all(trees.map((wt) => wt.remove()));
  });

  it("makes linked worktrees while a foreign git worktree prune runs over and over (no lock between them): none is lost", async () => {
    const { dir, mirror } = await setup();
    await mirror.ensure();
    let adding = true;
    let prunes = 0;
    const pruning = (async () => {
      while (adding) {
        await git(mirror.gitDir, "worktree", "prune");
        prunes++;
      }
    })();
    const adds = Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        mirror.addWorktree({ base: "main", path: path.join(dir, "p", `w${i}`) }),
      ),
    ).finally(() => {
      adding = false;
    });
    const [trees] = await Promise.all([adds, pruning]);
    expect(prunes).toBeGreaterThan(0);
    await git(mirror.gitDir, "worktree", "prune");
    for (const wt of trees) {
      expect(await exists(wt.gitDirs().worktreeGitDir)).toBe(true);
      expect(await fs.readFile(path.join(wt.path, "README.md"), "utf8")).toBe("hello\n");
      expect(await wt.changedPaths()).toEqual([]);
    }
    // No staged admin directory is left beside worktrees/.
    expect((await fs.readdir(mirror.gitDir)).filter((n) => n.startsWith(".worktree-"))).toEqual([]);
    await Promise.all(trees.map((wt) => wt.remove()));
  });

  it("refuses a non-empty target and leaves it, and the mirror, as they were", async () => {
    const { dir, mirror } = await setup();
    await mirror.ensure();
    const target = path.join(dir, "busy");
    await fs.mkdir(target);
    await fs.writeFile(path.join(target, "mine.txt"), "keep\n");
    await expect(mirror.addWorktree({ base: "main", path: target })).rejects.toThrow(/not empty/);
    expect(await fs.readdir(target)).toEqual(["mine.txt"]);
    expect(await fs.readdir(path.join(mirror.gitDir, "worktrees")).catch(() => [])).toEqual([]);
    expect((await fs.readdir(mirror.gitDir)).filter((n) => n.startsWith(".worktree-"))).toEqual([]);
  });
});
