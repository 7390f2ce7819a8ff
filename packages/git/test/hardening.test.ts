import { promises as fs } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { GitError, pushBranch, RepoMirror } from "../src/index.ts";
import {
  commitOnRemote,
  exists,
  git,
  landOnMain,
  makeRemote,
  TEST_AUTHOR,
  useTempScope,
} from "./git-test-helpers.ts";

/**
 * Everything git could be tricked into running — hooks, fsmonitor, filter/textconv/merge
 * drivers, external diff, pager — is planted where an agent or a hostile remote could put it.
 * Each planted program appends to a marker file; the hardened flow must leave it absent. The
 * control tests run plain git on the same plantings to prove the markers do fire.
 */

const temp = useTempScope();

const HOOKS = [
  "applypatch-msg",
  "pre-applypatch",
  "post-applypatch",
  "pre-commit",
  "pre-merge-commit",
  "prepare-commit-msg",
  "commit-msg",
  "post-commit",
  "pre-rebase",
  "post-checkout",
  "post-merge",
  "pre-push",
  "pre-receive",
  "update",
  "proc-receive",
  "post-receive",
  "post-update",
  "reference-transaction",
  "push-to-checkout",
  "pre-auto-gc",
  "post-rewrite",
  "post-index-change",
  "fsmonitor-watchman",
];

async function plantProgram(dir: string, marker: string): Promise<string> {
  const program = path.join(dir, "evil.sh");
  await fs.writeFile(program, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat >/dev/null 2>&1\nexit 0\n`, {
    mode: 0o755,
  });
  return program;
}

/**
 * Hooks in `<gitDir>/hooks` and in a `core.hooksPath` dir, plus every program-running config key.
 * `drivers: false` leaves out filter/diff/merge drivers: in a user's own repository those are the
 * user's business (their own commits in the test would run them), and nothing Overseer runs
 * there (`worktree list`, receive-pack) reads attributes.
 */
async function plantInRepository(gitDir: string, program: string, drivers = true): Promise<void> {
  const hooksPathDir = path.join(gitDir, "evil-hooks");
  await fs.mkdir(path.join(gitDir, "hooks"), { recursive: true });
  await fs.mkdir(hooksPathDir, { recursive: true });
  for (const hook of HOOKS) {
    await fs.copyFile(program, path.join(gitDir, "hooks", hook));
    await fs.copyFile(program, path.join(hooksPathDir, hook));
    await fs.chmod(path.join(gitDir, "hooks", hook), 0o755);
    await fs.chmod(path.join(hooksPathDir, hook), 0o755);
  }
  const set = (key: string, value: string) => git(gitDir, "--git-dir", gitDir, "config", key, value);
  await set("core.hooksPath", hooksPathDir);
  await set("core.fsmonitor", program);
  if (drivers) {
    await set("filter.evil.clean", program);
    await set("filter.evil.smudge", program);
    await set("filter.evil.process", program);
    await set("diff.evil.textconv", program);
    await set("diff.evil.command", program);
    await set("merge.evil.driver", `${program} %O %A %B`);
  }
  await set("diff.external", program);
  await set("core.pager", program);
  await set("uploadpack.packObjectsHook", program);
  await set("core.sshCommand", program);
  await set("receive.denyCurrentBranch", "updateInstead");
}

const ATTRIBUTES = "* filter=evil diff=evil merge=evil\n";

/** Plain git with only config isolation — what an unhardened caller would run. */
function plainGit(cwd: string, args: string[]) {
  return execa("git", args, {
    cwd,
    reject: false,
    timeout: 10_000,
    stdin: "ignore",
    extendEnv: false,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "x",
      GIT_AUTHOR_EMAIL: "x@x",
      GIT_COMMITTER_NAME: "x",
      GIT_COMMITTER_EMAIL: "x@x",
    },
  });
}

async function runFlow(kind: "bare" | "non-bare") {
  const dir = await temp.make();
  const marker = path.join(dir, "MARKER");
  const program = await plantProgram(dir, marker);
  const bare = await makeRemote(dir, {
    ".gitattributes": ATTRIBUTES,
    "shared.txt": "1\n2\n3\n4\n5\n",
    "a.txt": "a\n",
  });
  let remote = bare;
  if (kind === "non-bare") {
    await git(dir, "clone", "--quiet", bare, "user");
    remote = path.join(dir, "user");
    await plantInRepository(path.join(remote, ".git"), program, false);
  } else {
    await plantInRepository(bare, program);
  }

  const mirror = new RepoMirror({ dataDir: path.join(dir, "data"), projectId: "evil", remote });
  await mirror.ensure();
  await mirror.ensure();
  const wt = await mirror.addWorktree({ base: "main", path: path.join(dir, "job"), branch: "task/evil" });

  // The agent's turn: content under evil attributes, and a planted .git directory of its own.
  await fs.writeFile(path.join(wt.path, "shared.txt"), "1\nTASK\n3\n4\n5\n");
  await fs.writeFile(path.join(wt.path, "sub.gitattributes"), ATTRIBUTES);
  await fs.writeFile(path.join(wt.path, ".gitattributes"), `${ATTRIBUTES}*.txt filter=evil\n`);
  await fs.rm(path.join(wt.path, ".git"));
  await plainGit(wt.path, ["init", "--quiet"]);
  await plantInRepository(path.join(wt.path, ".git"), program);

  const changes = await wt.changedPaths({ includeIgnored: true });
  expect(changes.map((c) => c.path).sort()).toEqual([".gitattributes", "shared.txt", "sub.gitattributes"]);
  const sha = (await wt.commit({ message: "evil", trailers: { Task: "T" }, author: TEST_AUTHOR })) as string;
  expect(await pushBranch(mirror, { branch: "task/evil", sha, expectedOldSha: null })).toEqual({ ok: true });

  // Main moves (by another worker, or by the user in their own repository) on the same file, so
  // landing really merges under merge=evil.
  const moveMain = async (content: string, message: string) => {
    if (kind === "bare") return commitOnRemote(remote, "main", { "shared.txt": content }, message);
    await fs.writeFile(path.join(remote, "shared.txt"), content);
    await git(remote, "commit", "--quiet", "-am", message);
  };
  await moveMain("1\n2\n3\n4\nMAIN\n", "main moved");
  const landing = kind === "non-bare" ? "overseer/main" : "main";
  const merged = await landOnMain(mirror, path.join(dir, "work"), "task/evil", {
    mergeMethod: "worktree",
    landing,
  });
  expect(merged.kind).toBe("landed");
  await commitOnRemote(remote, "task/evil2", { "b.txt": "b\n" }, "second", "main");
  await moveMain("MAIN0\n2\n3\n4\nMAIN\n", "main again");
  const merged2 = await landOnMain(mirror, path.join(dir, "work"), "task/evil2", { landing });
  expect(merged2.kind).toBe("landed");
  if (kind === "non-bare" && merged.kind === "landed") expect(merged.integration).toBe(true);
  await wt.remove();
  await mirror.pruneWorktrees();

  expect(await fs.readFile(marker, "utf8").catch(() => "(absent)")).toBe("(absent)");
  return { dir, marker, program, remote, bare, mirror, sha };
}

describe("hardening against planted programs", () => {
  it("runs nothing planted in a bare remote, the checkout or its attributes", async () => {
    await runFlow("bare");
  });

  it("runs nothing planted in a non-bare local remote and never updates its working tree", async () => {
    const { remote, mirror, sha, marker } = await runFlow("non-bare");
    // Even a direct push to the checked-out branch cannot reach the working tree: the planted
    // receive.denyCurrentBranch=updateInstead is overridden to refuse.
    const userMain = (await git(remote, "rev-parse", "refs/heads/main")).trim();
    await expect(pushBranch(mirror, { branch: "main", sha, expectedOldSha: userMain })).rejects.toThrow(
      GitError,
    );
    expect(await git(remote, "rev-parse", "refs/heads/main")).toBe(userMain);
    expect(await exists(marker)).toBe(false);
    expect(await fs.readFile(path.join(remote, "shared.txt"), "utf8")).toBe("MAIN0\n2\n3\n4\nMAIN\n");
    expect(await git(remote, "status", "--porcelain")).toBe("");
  });

  it("control: the same plantings do run under plain git", async () => {
    const dir = await temp.make();
    const marker = path.join(dir, "MARKER");
    const program = await plantProgram(dir, marker);
    const bare = await makeRemote(dir, { "a.txt": "a\n" });
    await plantInRepository(bare, program);
    await plainGit(dir, ["clone", "--quiet", bare, "c"]);
    const clone = path.join(dir, "c");
    await fs.writeFile(path.join(clone, "b.txt"), "b\n");
    await plainGit(clone, ["add", "b.txt"]);
    await plainGit(clone, ["commit", "--quiet", "-m", "b"]);
    await plainGit(clone, ["push", "--quiet", "origin", "HEAD:refs/heads/x"]);
    expect(await exists(marker)).toBe(true); // the remote's receive hooks ran

    await fs.rm(marker);
    const agentDir = path.join(dir, "agent");
    await fs.mkdir(agentDir);
    await plainGit(agentDir, ["init", "--quiet"]);
    await plantInRepository(path.join(agentDir, ".git"), program);
    await plainGit(agentDir, ["status"]);
    expect(await exists(marker)).toBe(true); // a planted .git config's fsmonitor ran
  });
});
