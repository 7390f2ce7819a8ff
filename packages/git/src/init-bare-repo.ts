import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type CommitAuthor, identityEnv } from "./commit-identity.ts";
import { GitInputError } from "./git-error.ts";
import { assertBranchName } from "./ref-names.ts";
import { runGit } from "./run-git.ts";

/**
 * Creates a bare repository at `repoPath` whose `branch` holds one commit with `initialFiles`
 * (for tests, benchmarks and the demo). The files are written to a temporary work tree outside
 * the repository and committed with an explicit `--git-dir`/`--work-tree` and a throwaway index,
 * through the same hardened runGit as everything else. Returns the commit id.
 */

export interface InitBareRepoOptions {
  /** Relative path → UTF-8 content. Empty: the first commit is empty. */
  initialFiles: Record<string, string>;
  /** The branch created, and HEAD of the new repository. */
  branch: string;
  /** Author/committer of the first commit. Default `Overseer <overseer@localhost>`. */
  author?: CommitAuthor;
  /** Message of the first commit. Default `Initial commit`. */
  message?: string;
}

export async function initBareRepo(repoPath: string, options: InitBareRepoOptions): Promise<string> {
  const branch = assertBranchName(options.branch, "branch");
  const target = path.resolve(repoPath);
  const files = Object.entries(options.initialFiles ?? {});
  for (const [name] of files) {
    if (
      name === "" ||
      path.isAbsolute(name) ||
      name.split("/").some((part) => part === ".." || part === "" || part === ".git")
    ) {
      throw new GitInputError(
        `initialFiles[${JSON.stringify(name)}]`,
        "expected a relative file path inside the repository",
      );
    }
  }
  await fs.mkdir(path.dirname(target), { recursive: true });
  await runGit(["init", "--bare", "--quiet", `--initial-branch=${branch}`, target], {
    cwd: path.dirname(target),
  });

  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "overseer-init-"));
  try {
    const tree = path.join(scratch, "tree");
    await fs.mkdir(tree);
    for (const [name, content] of files) {
      const file = path.join(tree, name);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, content);
    }
    const env = {
      ...identityEnv(options.author ?? { name: "Overseer", email: "overseer@localhost" }),
      GIT_INDEX_FILE: path.join(scratch, "index"),
    };
    const git = (args: string[], input?: string) =>
      runGit(["--git-dir", target, "--work-tree", tree, ...args], {
        cwd: tree,
        env,
        ...(input !== undefined ? { input } : {}),
      });
    await git(["add", "--all"]);
    await git(
      ["commit", "--quiet", "--no-verify", "--allow-empty", "--cleanup=verbatim", "--file=-"],
      `${(options.message ?? "Initial commit").trim()}\n`,
    );
    const head = await git(["rev-parse", "--verify", `refs/heads/${branch}`]);
    return head.stdout.trim();
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}
