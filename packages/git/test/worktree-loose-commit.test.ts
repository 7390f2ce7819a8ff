import { promises as fs, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { identityEnv } from "../src/commit-identity.ts";
import { buildCommitMessage } from "../src/commit-message-builder.ts";
import { runGit, type Worktree } from "../src/index.ts";
import { git, TEST_AUTHOR, useMirrorCheckouts } from "./git-test-helpers.ts";

/**
 * Worktree.commit writes a new commit without `git commit` (write-tree, then loose-commit.ts):
 * the object must be the very one `git commit` makes of the same index, message, identity and
 * time, and git must be left to commit wherever it would write something else.
 */

const rig = useMirrorCheckouts("loose", {
  "README.md": "hello\n",
  "edit.txt": "before\n",
  "gone.txt": "delete me\n",
  "script.sh": "#!/bin/sh\necho hi\n",
  "src/a/deep.txt": "deep\n",
  "src/b.txt": "b\n",
});
const checkout = () => rig.checkout({ neverCommit: [".env"] });

/** The same edits in any checkout: adds, edits, a deletion, an exec bit, a link, nested dirs. */
async function edit(wt: Worktree): Promise<void> {
  const at = (p: string) => path.join(wt.path, p);
  await fs.writeFile(at("edit.txt"), "after\n");
  await fs.rm(at("gone.txt"));
  await fs.chmod(at("script.sh"), 0o755);
  await fs.symlink("README.md", at("link"));
  await fs.mkdir(at("src/a/new dir"), { recursive: true });
  await fs.writeFile(at("src/a/new dir/ünïcødé.txt"), "x\n");
  await fs.writeFile(at("src/a-b.txt"), "sorts between src/a/ and src/b.txt\n");
  await fs.writeFile(at(".env"), "SECRET=1\n");
}

/** `git commit` of the checkout's staged index, at the author date of `like` (git's own path). */
async function gitCommit(wt: Worktree, message: string, like: string): Promise<string> {
  const { worktreeGitDir } = wt.gitDirs();
  const raw = await git(rig.mirror.gitDir, "cat-file", "commit", like);
  const author = raw.split("\n").find((line) => line.startsWith("author ")) ?? "";
  const date = author.slice(author.lastIndexOf("> ") + 2);
  await runGit(
    [
      "--git-dir",
      worktreeGitDir,
      "--work-tree",
      wt.path,
      "commit",
      "--quiet",
      "--no-verify",
      "--cleanup=verbatim",
      "--file=-",
    ],
    {
      cwd: wt.path,
      input: message,
      env: { ...identityEnv(TEST_AUTHOR), GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
    },
  );
  return wt.head();
}

/** The git commands run while `action` runs (GIT_TRACE2_EVENT, one file per git process). */
async function gitCommands(action: () => Promise<unknown>): Promise<string[]> {
  const trace = await fs.mkdtemp(path.join(rig.dir, "trace-"));
  process.env.GIT_TRACE2_EVENT = trace;
  try {
    await action();
  } finally {
    delete process.env.GIT_TRACE2_EVENT;
  }
  const names: string[] = [];
  for (const file of readdirSync(trace)) {
    for (const line of readFileSync(path.join(trace, file), "utf8").split("\n")) {
      if (line.includes('"event":"cmd_name"')) names.push(JSON.parse(line).name);
    }
  }
  return names.sort();
}

const TRAILERS = { Task: "S00-1", Agent: "execute-a", Role: "backend", Action: "execute", Status: "review" };

describe("Worktree.commit without git commit", () => {
  it("writes byte for byte the commit git commit makes of the same index, without a git process", async () => {
    const ours = await checkout();
    const theirs = await checkout();
    await edit(ours);
    await edit(theirs);
    await ours.stage();
    await theirs.stage();
    const options = { message: "Add things\n\nBody.", trailers: TRAILERS, author: TEST_AUTHOR, staged: true };
    let sha: string | null = null;
    expect(await gitCommands(async () => (sha = await ours.commit(options)))).toEqual([]);
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await ours.head()).toBe(sha);
    const message = buildCommitMessage(options.message, options.trailers);
    expect(await gitCommit(theirs, message, sha as unknown as string)).toBe(sha);
    expect(await git(rig.mirror.gitDir, "rev-parse", `${sha}^`)).toBe(ours.baseSha);
    await git(rig.mirror.gitDir, "fsck", "--strict", "--no-dangling");
    // Nothing is left to commit on the new HEAD: no second commit, HEAD stays.
    expect(await ours.commit({ ...options, message: "again" })).toBeNull();
    expect(await ours.head()).toBe(sha);
    await ours.remove();
    await theirs.remove();
  });

  it("finds nothing to commit against a packed HEAD, and commits on it", async () => {
    await git(rig.mirror.gitDir, "repack", "-a", "-d", "-q");
    await git(rig.mirror.gitDir, "prune-packed");
    const wt = await checkout();
    const object = path.join(rig.mirror.gitDir, "objects", wt.baseSha.slice(0, 2), wt.baseSha.slice(2));
    await expect(fs.access(object)).rejects.toThrow();
    await fs.writeFile(path.join(wt.path, ".env"), "never committed\n");
    const options = { message: "Nothing", trailers: TRAILERS, author: TEST_AUTHOR };
    const nothing = await gitCommands(async () => expect(await wt.commit(options)).toBeNull());
    expect(nothing).toEqual(["add"]);
    expect(await wt.head()).toBe(wt.baseSha);
    await edit(wt);
    const sha = await wt.commit(options);
    expect(await git(rig.mirror.gitDir, "rev-parse", `${sha}^`)).toBe(wt.baseSha);
    expect(await git(rig.mirror.gitDir, "ls-tree", "-r", "--name-only", sha ?? "")).toContain("src/a-b.txt");
    await git(rig.mirror.gitDir, "fsck", "--strict", "--no-dangling");
    // HEAD past the base and packed: its tree is asked of git.
    await git(rig.mirror.gitDir, "repack", "-a", "-d", "-q");
    await git(rig.mirror.gitDir, "prune-packed");
    const again = await gitCommands(async () =>
      expect(await wt.commit({ ...options, staged: true })).toBeNull(),
    );
    expect(again).toEqual(["rev-parse"]);
    await wt.remove();
  });

  it("lists a staged checkout's changes from the index files, both sides of a rename, without a git process", async () => {
    const wt = await checkout();
    await edit(wt);
    await fs.rename(path.join(wt.path, "src/b.txt"), path.join(wt.path, "src/b-renamed.txt"));
    await wt.stage();
    const paired = await wt.changedPaths({ staged: true });
    expect(paired.find((c) => c.status === "renamed")).toMatchObject({
      path: "src/b-renamed.txt",
      oldPath: "src/b.txt",
    });
    let listed: Awaited<ReturnType<Worktree["changedPaths"]>> = [];
    const commands = await gitCommands(async () => {
      listed = await wt.changedPaths({ staged: true, renames: false });
    });
    expect(commands).toEqual([]);
    const paths = (changes: typeof listed) =>
      [...new Set(changes.flatMap((c) => [c.path, c.oldPath ?? c.path]))].sort();
    expect(paths(listed)).toEqual(paths(paired));
    expect(listed.find((c) => c.path === "link")).toMatchObject({
      status: "added",
      isSymlink: true,
      symlinkTarget: "README.md",
    });
    expect(listed.find((c) => c.path === "script.sh")).toMatchObject({
      status: "modified",
      modeChange: true,
    });
    expect(listed.filter((c) => c.status === "renamed")).toEqual([]);
    await wt.remove();
  });

  it("leaves a large index (thousands of files) to git's write-tree and diff-index", async () => {
    const wt = await checkout();
    await edit(wt);
    const many = path.join(wt.path, "many");
    await fs.mkdir(many);
    await Promise.all(
      Array.from({ length: 4000 }, (_, i) => fs.writeFile(path.join(many, `f${i}`), `${i}\n`)),
    );
    await wt.stage();
    const commands = await gitCommands(() =>
      Promise.all([
        wt.changedPaths({ staged: true, renames: false }),
        wt.commit({ message: "Many", trailers: TRAILERS, author: TEST_AUTHOR, staged: true }),
      ]),
    );
    expect(commands).toEqual(["diff-index", "write-tree"]);
    await wt.remove();
  });

  it("leaves the commit to git where git would write another object", async () => {
    // An identity git cleans up (the trailing dot is stripped from the name).
    const wt = await checkout();
    await edit(wt);
    const author = { name: "Overseer Test Jr.", email: "test@overseer.local" };
    let sha: string | null = null;
    const names = await gitCommands(async () => {
      sha = await wt.commit({ message: "Odd name", trailers: TRAILERS, author });
    });
    expect(names).toEqual(["add", "commit"]);
    expect(await git(rig.mirror.gitDir, "cat-file", "commit", sha ?? "")).toMatch(
      /^author Overseer Test Jr <test@overseer\.local> /m,
    );
    await wt.remove();

    // A shared repository, whose objects git writes with other modes.
    const config = path.join(rig.mirror.gitDir, "config");
    const before = await fs.readFile(config, "utf8");
    await git(rig.mirror.gitDir, "config", "core.sharedRepository", "group");
    try {
      const shared = await checkout();
      await edit(shared);
      const commands = await gitCommands(() =>
        shared.commit({ message: "Shared", trailers: TRAILERS, author: TEST_AUTHOR }),
      );
      expect(commands).toEqual(["add", "commit"]);
      await shared.remove();
    } finally {
      await fs.writeFile(config, before);
    }
  });
});
