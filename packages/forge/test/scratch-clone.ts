/** A local clone of a forge double's repository that commits and pushes like a person or a worker does. */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface ScratchClone {
  readonly dir: string;
  /** Commits `files` on `branch` (created from origin/main if new) and pushes it; the new sha. */
  commitAndPush(branch: string, files: Record<string, string>, message: string): Promise<string>;
  /** Pushes HEAD to `branch`; the push's stderr when refused. */
  push(branch: string): Promise<{ ok: boolean; stderr: string }>;
  remove(): Promise<void>;
}

export async function cloneScratch(url: string): Promise<ScratchClone> {
  const parent = await mkdtemp(path.join(tmpdir(), "forge-clone-"));
  const dir = path.join(parent, "w");
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: "Test",
    GIT_AUTHOR_EMAIL: "test@example.test",
    GIT_COMMITTER_NAME: "Test",
    GIT_COMMITTER_EMAIL: "test@example.test",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
  };
  const git = async (...args: string[]) => (await run("git", ["-C", dir, ...args], { env })).stdout.trim();
  await run("git", ["clone", "--quiet", url, dir], { env });
  return {
    dir,
    async commitAndPush(branch, files, message) {
      const branches = await git("branch", "--list", branch);
      if (branches) await git("checkout", "--quiet", branch);
      else await git("checkout", "--quiet", "-b", branch, "origin/main");
      for (const [file, content] of Object.entries(files)) {
        await writeFile(path.join(dir, file), content);
        await git("add", file);
      }
      await git("commit", "--quiet", "-m", message);
      await git("push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
      return git("rev-parse", "HEAD");
    },
    async push(branch) {
      try {
        await git("push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
        return { ok: true, stderr: "" };
      } catch (error) {
        return { ok: false, stderr: String((error as { stderr?: string }).stderr ?? error) };
      }
    },
    remove: () => rm(parent, { recursive: true, force: true }),
  };
}
