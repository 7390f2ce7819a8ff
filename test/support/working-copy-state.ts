import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { runGit } from "@overseer/git";

/** Everything of a working copy that Overseer must leave alone, read without writing anything. */
export async function workingCopyState(repo: string, files = ["README.md", "src/calc.js", "notes.txt"]) {
  // GIT_OPTIONAL_LOCKS=0 (runGit's default) keeps `status` from refreshing the index.
  const git = async (...args: string[]) => (await runGit(args, { cwd: repo })).stdout;
  const hash = async (file: string) =>
    createHash("sha256")
      .update(await readFile(path.join(repo, file)))
      .digest("hex");
  return {
    head: await git("symbolic-ref", "HEAD"),
    headSha: await git("rev-parse", "HEAD"),
    main: await git("rev-parse", "refs/heads/main"),
    status: await git("status", "--porcelain=v1", "-z", "--untracked-files=all"),
    index: await hash(".git/index"),
    files: Object.fromEntries(await Promise.all(files.map(async (f) => [f, await hash(f)] as const))),
  };
}
