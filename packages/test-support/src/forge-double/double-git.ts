/**
 * The real git behind a forge double: bare repositories served over smart HTTP, a pre-receive
 * hook that refuses pushes to protected branches with the forge's own words, and merges done
 * the way a forge does them (plumbing, never a work tree): a merge commit, a squash commit or
 * the head's commits replayed on the base.
 */
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

const IDENTITY = {
  GIT_AUTHOR_NAME: "Forge Double",
  GIT_AUTHOR_EMAIL: "noreply@forge-double.test",
  GIT_COMMITTER_NAME: "Forge Double",
  GIT_COMMITTER_EMAIL: "noreply@forge-double.test",
};

const HOOK = `#!/bin/sh
# Branch protection of the forge double: refuses every push to a listed branch.
list="$GIT_DIR/protected-branches"
[ -f "$list" ] || exit 0
refused=0
while read old new ref; do
  branch=\${ref#refs/heads/}
  if grep -qxF "$branch" "$list"; then
    sed "s|{ref}|$ref|g; s|{branch}|$branch|g" "$GIT_DIR/protected-message" >&2
    refused=1
  fi
done
exit $refused
`;

export interface MergeResult {
  readonly sha: string | null;
  /** Paths in conflict when the merge cannot be made. */
  readonly conflicts: readonly string[];
}

export class DoubleGit {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  gitDir(repository: string): string {
    return path.join(this.root, `${repository}.git`);
  }

  async git(repository: string, args: string[], input?: string): Promise<string> {
    const child = run("git", ["--git-dir", this.gitDir(repository), ...args], {
      env: { ...process.env, ...IDENTITY, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      maxBuffer: 64 * 1024 * 1024,
    });
    if (input !== undefined) {
      child.child.stdin?.end(input);
    }
    return (await child).stdout.trim();
  }

  /** A bare repository with one commit on `branch` holding `files`; protection `message` lines name `{ref}`/`{branch}`. */
  async create(
    repository: string,
    branch: string,
    files: Record<string, string>,
    protectionMessage: string,
  ): Promise<string> {
    const dir = this.gitDir(repository);
    await mkdir(path.dirname(dir), { recursive: true });
    await run("git", ["init", "--quiet", "--bare", "-b", branch, dir]);
    await this.git(repository, ["config", "http.receivepack", "true"]);
    await writeFile(path.join(dir, "hooks", "pre-receive"), HOOK);
    await chmod(path.join(dir, "hooks", "pre-receive"), 0o755);
    await writeFile(path.join(dir, "protected-message"), `${protectionMessage}\n`);
    await writeFile(path.join(dir, "protected-branches"), "");
    return this.commitFiles(repository, branch, files, "Initial commit");
  }

  async protect(repository: string, branches: readonly string[]): Promise<void> {
    await writeFile(
      path.join(this.gitDir(repository), "protected-branches"),
      branches.map((b) => `${b}\n`).join(""),
    );
  }

  async resolve(repository: string, ref: string): Promise<string | null> {
    try {
      return await this.git(repository, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
    } catch {
      return null;
    }
  }

  /** A commit on `branch` (created if missing) changing `files`, as a person pushing to the forge would. */
  async commitFiles(
    repository: string,
    branch: string,
    files: Record<string, string>,
    message: string,
  ): Promise<string> {
    const parent = await this.resolve(repository, `refs/heads/${branch}`);
    const index = path.join(this.gitDir(repository), `index-${process.pid}-${Date.now()}`);
    const env = { GIT_INDEX_FILE: index };
    const git = (args: string[], input?: string) => this.gitEnv(repository, args, env, input);
    if (parent) await git(["read-tree", parent]);
    for (const [file, content] of Object.entries(files)) {
      const blob = await git(["hash-object", "-w", "--stdin"], content);
      await git(["update-index", "--add", "--cacheinfo", `100644,${blob},${file}`]);
    }
    const tree = await git(["write-tree"]);
    const sha = await git(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", message]);
    await this.git(repository, ["update-ref", `refs/heads/${branch}`, sha, ...(parent ? [parent] : [])]);
    await rm(index, { force: true });
    return sha;
  }

  /** Merges `head` into `base` as the forge's merge button does; moves `base` only when it succeeds. */
  async merge(
    repository: string,
    base: string,
    head: string,
    method: "merge" | "squash" | "rebase",
    message: string,
  ): Promise<MergeResult> {
    const baseSha = await this.resolve(repository, `refs/heads/${base}`);
    if (!baseSha) throw new Error(`No branch ${base} in ${repository}.`);
    let sha: string;
    if (method === "rebase") {
      const replayed = await this.replay(repository, baseSha, head);
      if (typeof replayed !== "string") return { sha: null, conflicts: replayed };
      sha = replayed;
    } else {
      const tree = await this.mergeTree(repository, baseSha, head);
      if (typeof tree !== "string") return { sha: null, conflicts: tree };
      const parents = method === "merge" ? ["-p", baseSha, "-p", head] : ["-p", baseSha];
      sha = await this.git(repository, ["commit-tree", tree, ...parents, "-m", message]);
    }
    await this.git(repository, ["update-ref", `refs/heads/${base}`, sha, baseSha]);
    return { sha, conflicts: [] };
  }

  /** Whether `head` merges into `base` without conflict. */
  async mergeable(repository: string, base: string, head: string): Promise<boolean> {
    const baseSha = await this.resolve(repository, `refs/heads/${base}`);
    return baseSha !== null && typeof (await this.mergeTree(repository, baseSha, head)) === "string";
  }

  /** `head`'s commits since `base` replayed on it (git rebase in a scratch worktree), or the conflicting paths. */
  private async replay(repository: string, base: string, head: string): Promise<string | string[]> {
    const scratch = await mkdtemp(path.join(tmpdir(), "forge-double-rebase-"));
    const work = path.join(scratch, "w");
    await this.git(repository, ["worktree", "add", "--quiet", "--detach", work, head]);
    try {
      await run("git", ["-C", work, "rebase", "--quiet", base], { env: { ...process.env, ...IDENTITY } });
      return (await run("git", ["-C", work, "rev-parse", "HEAD"])).stdout.trim();
    } catch {
      const conflicts = (await run("git", ["-C", work, "diff", "--name-only", "--diff-filter=U"])).stdout;
      await run("git", ["-C", work, "rebase", "--abort"]).catch(() => undefined);
      return conflicts.split("\n").filter(Boolean);
    } finally {
      await this.git(repository, ["worktree", "remove", "--force", work]);
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /** The merged tree, or the conflicting paths. */
  private async mergeTree(repository: string, ours: string, theirs: string): Promise<string | string[]> {
    try {
      return await this.git(repository, [
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        ours,
        theirs,
      ]);
    } catch (error) {
      const out = String((error as { stdout?: string }).stdout ?? "")
        .trim()
        .split("\n");
      return out.slice(1).filter(Boolean);
    }
  }

  private async gitEnv(
    repository: string,
    args: string[],
    env: Record<string, string>,
    input?: string,
  ): Promise<string> {
    const child = run("git", ["--git-dir", this.gitDir(repository), ...args], {
      env: { ...process.env, ...IDENTITY, ...env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    });
    if (input !== undefined) child.child.stdin?.end(input);
    return (await child).stdout.trim();
  }
}
