import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { identityEnv } from "../src/commit-identity.ts";
import { initBareRepo, runGit } from "../src/index.ts";
import { commitBody, writeLooseCommit } from "../src/loose-commit.ts";
import { useTempScope } from "./git-test-helpers.ts";

const temp = useTempScope();

/** A bare repository with `main` holding one file; its head and tree. */
async function repo(files: Record<string, string> = { "README.md": "hello\n" }) {
  const gitDir = path.join(await temp.make(), "repo.git");
  await initBareRepo(gitDir, { initialFiles: files, branch: "main" });
  const read = async (...args: string[]) => (await runGit(args, { cwd: gitDir })).stdout.trim();
  const head = await read("rev-parse", "refs/heads/main");
  const tree = await read("rev-parse", "refs/heads/main^{tree}");
  return { gitDir, head, tree, read };
}

/** What `git commit-tree` writes at `now` (the date passed as git's raw format, with `now`'s offset). */
async function gitCommitTree(
  gitDir: string,
  input: { tree: string; parents: string[]; message: string; env: Record<string, string>; now: Date },
) {
  const author = (commitBody(input) ?? "").split("\n").find((line) => line.startsWith("author ")) ?? "";
  const raw = author.slice(author.lastIndexOf("> ") + 2);
  const result = await runGit(
    ["commit-tree", input.tree, ...input.parents.flatMap((p) => ["-p", p]), "-F", "-"],
    {
      cwd: gitDir,
      input: input.message,
      env: { ...input.env, GIT_AUTHOR_DATE: raw, GIT_COMMITTER_DATE: raw },
    },
  );
  return result.stdout.trim();
}

const AUTHOR = identityEnv({ name: "Overseer Bot", email: "bot@overseer.local" });
const NOW = new Date("2026-12-06T13:30:07.500Z");

describe("writeLooseCommit", () => {
  it("writes the very object git commit-tree writes, which git then reads as a valid commit", async () => {
    const { gitDir, head, tree, read } = await repo();
    const second = await gitCommitTree(gitDir, {
      tree,
      parents: [head],
      message: "other\n",
      env: AUTHOR,
      now: NOW,
    });
    const cases = [
      { parents: [head], message: "Land S00-1 on main\n\nWork.\n\nTask: S00-1\nReviewed-head: abc\n" },
      { parents: [head, second], message: "Merge main into the task\n" },
      { parents: [], message: "root without a final newline" },
      { parents: [head], message: "Ünïcode — 漢字 ✓\n" },
    ];
    const envs = [AUTHOR, identityEnv({ name: "Zoë Ågren-O'Neil", email: "zoe@example.org" })];
    for (const { parents, message } of cases) {
      for (const env of envs) {
        const input = { tree, parents, message, env, now: NOW };
        const written = writeLooseCommit(gitDir, input);
        expect(written).not.toBeNull();
        expect(written).toBe(await gitCommitTree(gitDir, input));
        expect(await read("cat-file", "-t", written as string)).toBe("commit");
      }
    }
    // Every object is well-formed and nothing temporary is left beside them.
    await read("fsck", "--strict", "--no-dangling");
    const leftovers = (await fs.readdir(path.join(gitDir, "objects"), { recursive: true })).filter((f) =>
      String(f).includes("tmp_obj_"),
    );
    expect(leftovers).toEqual([]);
  });

  it("writes an object that exists already again as the same id, its file made fresh", async () => {
    const { gitDir, head, tree } = await repo();
    const input = { tree, parents: [head], message: "same\n", env: AUTHOR, now: NOW };
    const first = writeLooseCommit(gitDir, input) as string;
    const file = path.join(gitDir, "objects", first.slice(0, 2), first.slice(2));
    const old = new Date("2020-01-01T00:00:00Z");
    await fs.utimes(file, old, old);
    expect(writeLooseCommit(gitDir, { ...input, now: new Date() })).not.toBe(first);
    expect(writeLooseCommit(gitDir, input)).toBe(first);
    expect((await fs.stat(file)).mtimeMs).toBe(NOW.getTime());
  });

  it("leaves to git what git would write differently, and repositories of another kind", async () => {
    const { gitDir, head, tree } = await repo();
    const base = { tree, parents: [head], message: "m\n", env: AUTHOR, now: NOW };
    const refused = [
      { ...base, env: identityEnv({ name: "Bot Jr.", email: "bot@overseer.local" }) },
      { ...base, env: identityEnv({ name: "Bot", email: "'bot@overseer.local'" }) },
      { ...base, env: { ...AUTHOR, GIT_COMMITTER_NAME: "Someone Else" } },
      { ...base, message: "a NUL \0 byte\n" },
      { ...base, message: "a \uFFFF non-character\n" },
      { ...base, parents: [head, head] },
      { ...base, tree: "abc" },
    ];
    for (const input of refused) expect(writeLooseCommit(gitDir, input)).toBeNull();

    for (const setting of [
      ["core.sharedRepository", "group"],
      ["extensions.compatObjectFormat", "sha256"],
    ]) {
      const other = await repo();
      await runGit(["config", ...setting], { cwd: other.gitDir });
      expect(writeLooseCommit(other.gitDir, { ...base, tree: other.tree, parents: [other.head] })).toBeNull();
    }
  });
});
