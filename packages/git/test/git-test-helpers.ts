import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { execa, type ResultPromise } from "execa";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import {
  initBareRepo,
  type LandBranchOptions,
  landBranch,
  RepoMirror,
  runGit,
  type Worktree,
} from "../src/index.ts";

/** Test helpers: temp dirs that are always removed, plain git plumbing for arranging remotes. */

export const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const FIXTURES_DIR = path.join(PACKAGE_DIR, "test", "fixtures");

export const TEST_AUTHOR = { name: "Overseer Test", email: "test@overseer.local" };
const IDENTITY = {
  GIT_AUTHOR_NAME: TEST_AUTHOR.name,
  GIT_AUTHOR_EMAIL: TEST_AUTHOR.email,
  GIT_COMMITTER_NAME: TEST_AUTHOR.name,
  GIT_COMMITTER_EMAIL: TEST_AUTHOR.email,
};

/** A scope of temp dirs; call `cleanup()` in afterEach/afterAll. */
export function tempScope() {
  const dirs: string[] = [];
  return {
    async make(prefix = "overseer-git-test-"): Promise<string> {
      const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
      dirs.push(dir);
      return dir;
    },
    async cleanup(): Promise<void> {
      for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** A `tempScope` whose dirs are removed after each test of the file. */
export function useTempScope() {
  const temp = tempScope();
  afterEach(() => temp.cleanup());
  return temp;
}

/**
 * For a whole test file: a temp dir, a remote whose `main` holds `files`, its mirror (cloned
 * once), and `checkout()` making a fresh worktree of it per call (`jobs` counts them).
 */
export function useMirrorCheckouts(projectId: string, files: Record<string, string>) {
  const temp = tempScope();
  const rig = {
    dir: "",
    mirror: undefined as unknown as RepoMirror,
    jobs: 0,
    checkout(options: { base?: string; neverCommit?: string[] } = {}): Promise<Worktree> {
      rig.jobs++;
      return rig.mirror.addWorktree({
        base: options.base ?? "main",
        path: path.join(rig.dir, "jobs", `job-${rig.jobs}`),
        ...(options.neverCommit ? { neverCommit: options.neverCommit } : {}),
      });
    },
  };
  beforeAll(async () => {
    rig.dir = await temp.make();
    const remote = await makeRemote(rig.dir, files);
    rig.mirror = new RepoMirror({ dataDir: path.join(rig.dir, "data"), projectId, remote });
    await rig.mirror.ensure();
  });
  afterAll(() => temp.cleanup());
  return rig;
}

/** `git <args>` in `cwd` through the hardened runner; returns trimmed stdout. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const result = await runGit(args, { cwd, env: IDENTITY });
  return result.stdout.trim();
}

/** A bare "remote" with `main` holding `files`. */
export async function makeRemote(
  dir: string,
  files: Record<string, string>,
  branch = "main",
): Promise<string> {
  const remote = path.join(dir, "remote.git");
  await initBareRepo(remote, { initialFiles: files, branch });
  return remote;
}

/** What a landing test's remote holds on `main` (`shared.txt` for conflicting edits). */
export const LANDING_FILES = { "README.md": "hello\n", "shared.txt": "line 1\nline 2\nline 3\n" };

/**
 * In a new temp dir of `temp`: a remote (by default a bare one with `LANDING_FILES`; `makeRemoteIn`
 * builds another kind in the dir), a fetched mirror of it for `projectId`, and a work dir to land in.
 */
export async function landingRig(
  temp: ReturnType<typeof tempScope>,
  projectId: string,
  makeRemoteIn: (dir: string) => Promise<string> = (dir) => makeRemote(dir, LANDING_FILES),
) {
  const dir = await temp.make();
  const remote = await makeRemoteIn(dir);
  const mirror = new RepoMirror({ dataDir: path.join(dir, "data"), projectId, remote });
  await mirror.ensure();
  return { dir, remote, mirror, workDir: path.join(dir, "work") };
}

/** Lands `source` on `main` with the message `Merge <source>` by the test author; `extra` overrides. */
export function landOnMain(
  mirror: RepoMirror,
  workDir: string,
  source: string,
  extra: Partial<LandBranchOptions> = {},
) {
  return landBranch(mirror, {
    source,
    target: "main",
    workDir,
    message: `Merge ${source}`,
    author: TEST_AUTHOR,
    ...extra,
  });
}

const HOOKLESS_RECEIVE_PACK =
  "git -c core.hooksPath=/dev/null -c receive.denyCurrentBranch=refuse receive-pack";

/**
 * Commits `files` (null = delete) on `branch` of `remote` from a throwaway clone, as another
 * user would, and returns the new commit id. `from` picks the starting branch when `branch`
 * does not exist yet.
 */
export async function commitOnRemote(
  remote: string,
  branch: string,
  files: Record<string, string | null>,
  message: string,
  from = "main",
): Promise<string> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), "overseer-git-clone-"));
  try {
    await git(work, "clone", "--quiet", "--no-checkout", remote, "c");
    const clone = path.join(work, "c");
    const branches = await git(clone, "branch", "-r", "--list", `origin/${branch}`);
    await git(clone, "checkout", "--quiet", "-B", branch, branches ? `origin/${branch}` : `origin/${from}`);
    for (const [name, content] of Object.entries(files)) {
      const file = path.join(clone, name);
      if (content === null) await fs.rm(file, { force: true });
      else {
        await fs.mkdir(path.dirname(file), { recursive: true });
        await fs.writeFile(file, content);
      }
    }
    await git(clone, "add", "--all");
    await git(clone, "commit", "--quiet", "-m", message);
    // Like a well-behaved second user: the remote's own hooks are not this helper's business.
    await git(
      clone,
      "push",
      "--quiet",
      `--receive-pack=${HOOKLESS_RECEIVE_PACK}`,
      "origin",
      `HEAD:refs/heads/${branch}`,
    );
    return await git(clone, "rev-parse", "HEAD");
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/**
 * Rewrites line 2 of `shared.txt` (`LANDING_FILES`) as TASK on `branch`, then as MAIN on
 * `main`, so that the two conflict; `extra` adds files to either side. Answers both commits.
 */
export async function conflictingEdits(
  remote: string,
  branch: string,
  extra: { task?: Record<string, string>; main?: Record<string, string> } = {},
): Promise<{ taskHead: string; main: string }> {
  const task = { "shared.txt": "line 1\nTASK\nline 3\n", ...extra.task };
  const taskHead = await commitOnRemote(remote, branch, task, `${branch} edit`);
  const main = await commitOnRemote(
    remote,
    "main",
    { "shared.txt": "line 1\nMAIN\nline 3\n", ...extra.main },
    "main edit",
  );
  return { taskHead, main };
}

/** The commit id of `branch` in the repository at `repo`, or null. */
export async function headOf(repo: string, branch: string): Promise<string | null> {
  const result = await runGit(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`], {
    cwd: repo,
    okExitCodes: [1],
  });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

export async function isAncestor(repo: string, ancestor: string, descendant: string): Promise<boolean> {
  const result = await runGit(["merge-base", "--is-ancestor", ancestor, descendant], {
    cwd: repo,
    okExitCodes: [1],
  });
  return result.exitCode === 0;
}

/**
 * Asserts what a landing that did not need to integrate anything leaves on `branch`: one new
 * commit on `parent` with exactly the tree of the reviewed commit, which itself is no ancestor.
 */
export async function expectLandedExactly(
  repo: string,
  branch: string,
  reviewed: string,
  parent: string,
): Promise<string> {
  const landed = (await headOf(repo, branch)) as string;
  const [tree, parents] = (await git(repo, "show", "-s", "--format=%T|%P", landed)).split("|");
  const reviewedTree = await git(repo, "rev-parse", `${reviewed}^{tree}`);
  if (tree !== reviewedTree || parents !== parent || (await isAncestor(repo, reviewed, landed))) {
    throw new Error(
      `${branch} is ${landed} (tree ${tree}, parents ${parents}); expected tree ${reviewedTree} on ${parent}, without ${reviewed} as an ancestor`,
    );
  }
  return landed;
}

/** Content hash, mode, mtime and link text of every entry under `dir` except top-level `skip` names. */
export async function snapshotTree(
  dir: string,
  skip: readonly string[] = [],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (current: string): Promise<void> => {
    for (const entry of await fs.readdir(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      const rel = path.relative(dir, full);
      if (current === dir && skip.includes(entry.name)) continue;
      const stat = await fs.lstat(full);
      if (entry.isSymbolicLink()) out[rel] = `link ${await fs.readlink(full)}`;
      else if (entry.isDirectory()) {
        out[rel] = `dir ${stat.mode.toString(8)}`;
        await walk(full);
      } else {
        const hash = createHash("sha256")
          .update(await fs.readFile(full))
          .digest("hex");
        out[rel] = `file ${stat.mode.toString(8)} ${hash} ${stat.mtimeMs}`;
      }
    }
  };
  await walk(dir);
  return out;
}

/** Runs a fixture script in a child Node process (TypeScript through tsx). */
export function runFixture(script: string, args: string[]): ResultPromise<{ cwd: string; reject: false }> {
  return execa(process.execPath, ["--import", "tsx", path.join(FIXTURES_DIR, script), ...args], {
    cwd: PACKAGE_DIR,
    reject: false,
  });
}

/** Resolves when `child` prints a line equal to `line`; rejects if it exits first or after `timeoutMs`. */
export function waitForLine(
  child: { stdout: NodeJS.ReadableStream | null; once(event: "exit", fn: () => void): unknown },
  line: string,
  timeoutMs = 20_000,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(
      () => reject(new Error(`child did not print ${JSON.stringify(line)} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stdout?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      if (buffered.split("\n").includes(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", () => {
      clearTimeout(timer);
      reject(new Error(`child exited before printing ${JSON.stringify(line)}; output: ${buffered}`));
    });
  });
}

/** True if `file` exists. */
export async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

/** The git processes one call ran, read from git's own trace (GIT_TRACE2_EVENT). */
export interface GitProcesses {
  /** Subcommands of the processes this process spawned itself, in order (`worktree add` as two words). */
  commands: string[];
  /** Every git process, children (push's receive-pack, worktree add's update-ref…) included. */
  total: number;
}

/**
 * Runs `call` with git tracing on (runGit passes GIT_TRACE2_EVENT through) and reports the git
 * processes it started. Calls in the same test file run one at a time, so nothing else is traced.
 */
export async function tracingGit<T>(
  temp: ReturnType<typeof tempScope>,
  call: () => Promise<T>,
): Promise<{ result: T; processes: GitProcesses }> {
  const file = path.join(await temp.make("overseer-git-trace-"), "trace.json");
  const previous = process.env.GIT_TRACE2_EVENT;
  process.env.GIT_TRACE2_EVENT = file;
  let result: T;
  try {
    result = await call();
  } finally {
    if (previous === undefined) delete process.env.GIT_TRACE2_EVENT;
    else process.env.GIT_TRACE2_EVENT = previous;
  }
  const text = await fs.readFile(file, "utf8").catch(() => "");
  const starts = text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { event: string; sid: string; argv: string[] })
    .filter((event) => event.event === "start");
  const commands = starts.filter((event) => !event.sid.includes("/")).map((event) => subcommand(event.argv));
  return { result, processes: { commands, total: starts.length } };
}

/** `worktree add` from `git -c a=b --git-dir X worktree add …`; other commands by their first word. */
function subcommand(argv: string[]): string {
  const words = argv.slice(1);
  let i = 0;
  while (i < words.length && (words[i] as string).startsWith("-")) {
    const word = words[i] as string;
    i += word === "-c" || word === "--git-dir" || word === "--work-tree" ? 2 : 1;
  }
  const command = words[i] ?? "";
  return command === "worktree" ? `worktree ${words[i + 1] ?? ""}` : command;
}

/** `git fsck` of `repo` finds nothing: every object whole, every ref's history complete. */
export async function expectWhole(repo: string): Promise<void> {
  const fsck = await runGit(["fsck", "--full", "--strict", "--no-dangling", "--no-progress"], {
    cwd: repo,
    okExitCodes: [1, 2, 4, 8],
  });
  expect(fsck.stderr + fsck.stdout).toBe("");
  expect(fsck.exitCode).toBe(0);
}
