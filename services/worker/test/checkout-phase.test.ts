/**
 * The checkout phase (checkout-phase.ts) on a real bare repository and mirror: the run's
 * directories and prompt are written beside git's work (heads, worktree), and what it leaves
 * is the same as when they were written one after the other; when it fetches, counted from
 * git's own trace (GIT_TRACE2_EVENT).
 */
import { execFileSync } from "node:child_process";
import { lstat, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { initBareRepo, RepoMirror, type Worktree } from "@overseer/git";
import { type RunJob, runJobSchema } from "@overseer/run-contract";
import { runJobFixture } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareCheckout } from "../src/checkout-phase.ts";
import { PhaseClock, type RunExecutorDeps } from "../src/run-context.ts";

let dir = "";
let remote = "";
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "overseer-checkout-phase-"));
  remote = path.join(dir, "remote.git");
  await initBareRepo(remote, {
    initialFiles: { "README.md": "hello\n", "src/app.txt": "v1\n" },
    branch: "main",
  });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function setup(projectId: string, freshMs = 0) {
  const mirror = new RepoMirror({ dataDir: path.join(dir, "data"), projectId, remote, gitTimeoutMs: 30_000 });
  const deps = {
    diskLimitBytes: 1024 * 1024 * 1024,
    mirrorFreshness: { lastSync: new Map<string, number>(), freshMs },
  } as unknown as RunExecutorDeps;
  return { mirror, deps };
}

const git = (...args: string[]) =>
  execFileSync("git", ["--git-dir", remote, ...args], {
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      GIT_AUTHOR_NAME: "Person",
      GIT_AUTHOR_EMAIL: "person@example.com",
      GIT_COMMITTER_NAME: "Person",
      GIT_COMMITTER_EMAIL: "person@example.com",
    },
  }).trim();

/** A commit on `branch` of the remote made elsewhere (another host's landing, a person's push). */
function commitOnRemote(branch: string, from = "main"): string {
  const parent = git("rev-parse", from);
  const sha = git("commit-tree", `${parent}^{tree}`, "-p", parent, "-m", `elsewhere on ${branch}`);
  git("update-ref", `refs/heads/${branch}`, sha);
  return sha;
}

/**
 * The mirror as another worker process on the host left it: cloned (or fetched) by its own
 * RepoMirror, which records the sync beside the mirror; `syncedAgoMs` ages that record.
 */
async function mirrorOfAnotherProcess(projectId: string, syncedAgoMs = 0): Promise<void> {
  const other = new RepoMirror({ dataDir: path.join(dir, "data"), projectId, remote, gitTimeoutMs: 30_000 });
  await other.ensure();
  if (syncedAgoMs > 0) await other.markSynced(Date.now() - syncedAgoMs);
}

/** Prepares the checkout of `job` with git traced: the run's base and the git commands it ran. */
async function tracedCheckout(projectId: string, job: RunJob, freshMs: number) {
  const { mirror, deps } = setup(projectId, freshMs);
  const traceDir = await mkdtemp(path.join(dir, "trace-"));
  const runDir = path.join(dir, "data", "runs", `${job.runId}-run`);
  const clock = new PhaseClock(job);
  process.env.GIT_TRACE2_EVENT = path.join(traceDir, "trace.json");
  const checkout = await prepareCheckout(job, deps, mirror, runDir, clock, () => undefined).finally(() => {
    delete process.env.GIT_TRACE2_EVENT;
  });
  const trace = await readFile(path.join(traceDir, "trace.json"), "utf8").catch(() => "");
  const commands = trace
    .split("\n")
    .filter((line) => line.includes('"event":"start"'))
    .map(
      (line) =>
        (JSON.parse(line) as { argv: string[] }).argv.find((a) =>
          /^(fetch|clone|upload-pack|read-tree|for-each-ref|rev-parse|cat-file)$/.test(a),
        ) ?? "other",
    );
  if (checkout.kind !== "ready") throw new Error(`checkout of ${job.runId} was ${checkout.kind}`);
  await checkout.worktree.remove();
  return { base: checkout.base, commands, phases: clock.timeline.map((p) => p.name) };
}

const mode = async (p: string) => (await lstat(p)).mode & 0o777;

describe("checkout phase", () => {
  it("leaves a private run dir: the checkout of the head, an empty control dir, the prompt (0600), placed files", async () => {
    const { mirror, deps } = setup("co-1");
    const job = runJobFixture({
      runId: "run-co-1",
      projectId: "co-1",
      repo: remote,
      prompt: "Do the task.\n",
      files: { ".env": "SECRET=1\n" },
    });
    const runDir = path.join(dir, "data", "runs", "co-1-run");
    let held: Worktree | null = null;
    const clock = new PhaseClock(job);
    const checkout = await prepareCheckout(job, deps, mirror, runDir, clock, (wt) => {
      held = wt;
    });
    expect(checkout.kind).toBe("ready");
    if (checkout.kind !== "ready") return;
    expect(held).toBe(checkout.worktree);
    expect(await mode(runDir)).toBe(0o700);
    expect(await mode(checkout.paths.controlDir)).toBe(0o700);
    expect(await readdir(checkout.paths.controlDir)).toEqual([]);
    expect(path.dirname(checkout.paths.promptFile)).toBe(runDir);
    expect(await readFile(checkout.paths.promptFile, "utf8")).toBe("Do the task.\n");
    expect(await mode(checkout.paths.promptFile)).toBe(0o600);
    expect(await readFile(path.join(checkout.paths.checkout, "src/app.txt"), "utf8")).toBe("v1\n");
    expect(await readFile(path.join(checkout.paths.checkout, ".env"), "utf8")).toBe("SECRET=1\n");
    expect(checkout.taskHead).toBeNull();
    expect(checkout.base).toBe((await mirror.branchHeads(["main"])).get("main"));
    // A mirror cloned for this run: the fetch, then the checkout.
    expect(clock.timeline.map((p) => p.name)).toEqual(["queue_wait", "fetch", "checkout"]);
    await checkout.worktree.remove();
  });

  it("a project whose branch does not exist is a configuration error, and nothing is still being written", async () => {
    const { mirror, deps } = setup("co-2");
    const job = runJobFixture({
      runId: "run-co-2",
      projectId: "co-2",
      repo: remote,
      mainBranch: "trunk",
      landingBranch: "trunk",
    });
    const runDir = path.join(dir, "data", "runs", "co-2-run");
    const checkout = await prepareCheckout(job, deps, mirror, runDir, new PhaseClock(job), () => undefined);
    expect(checkout).toMatchObject({ kind: "misconfigured", outcome: { reason: "configuration_error" } });
    // Whatever the phase started is done: removing the run dir now leaves nothing behind.
    await rm(runDir, { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(lstat(runDir)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("checkout phase: the fetch Postgres's landing lets a checkout skip", () => {
  const FRESH_MS = 60_000;
  const newTask = (runId: string, projectId: string, fields: Partial<RunJob> = {}) =>
    runJobFixture({
      runId,
      projectId,
      repo: remote,
      taskId: "S01-001",
      taskBranch: "overseer/task/S01-001",
      ...fields,
    });

  it("a new task whose mirror (synced by another worker process) is at the newest landing runs no fetch: only the checkout's own git process", async () => {
    await mirrorOfAnotherProcess("skip-1");
    const main = git("rev-parse", "main");
    const job = newTask("run-skip-1", "skip-1", { expectedBase: { branch: "main", sha: main } });
    const checkout = await tracedCheckout("skip-1", job, FRESH_MS);
    expect(checkout.base).toBe(main);
    expect(checkout.commands).toEqual(["read-tree"]);
    expect(checkout.phases).toEqual(["queue_wait", "checkout"]);
  });

  it("a mirror behind a landing Postgres knows of fetches, within the window, and starts from that landing", async () => {
    await mirrorOfAnotherProcess("skip-2");
    const landed = commitOnRemote("main");
    const job = newTask("run-skip-2", "skip-2", { expectedBase: { branch: "main", sha: landed } });
    const checkout = await tracedCheckout("skip-2", job, FRESH_MS);
    expect(checkout.base).toBe(landed);
    expect(checkout.commands.filter((c) => c === "fetch")).toHaveLength(1);
    expect(checkout.phases).toEqual(["queue_wait", "fetch", "checkout"]);
  });

  it("a review of a head the mirror has not seen fetches it", async () => {
    await mirrorOfAnotherProcess("skip-3");
    const head = commitOnRemote("overseer/task/S01-003");
    const main = git("rev-parse", "main");
    const job = newTask("run-skip-3", "skip-3", {
      action: "review",
      taskId: "S01-003",
      taskBranch: "overseer/task/S01-003",
      expectedTaskHead: head,
      expectedBase: { branch: "main", sha: main },
    });
    const checkout = await tracedCheckout("skip-3", job, FRESH_MS);
    expect(checkout.base).toBe(head);
    expect(checkout.commands.filter((c) => c === "fetch")).toHaveLength(1);
  });

  it("past the window, or with a window of 0, the newest landing does not stand in for the remote: a person's push is fetched", async () => {
    await mirrorOfAnotherProcess("skip-4", FRESH_MS * 2);
    const main = git("rev-parse", "main");
    const pushed = commitOnRemote("main");
    const job = newTask("run-skip-4", "skip-4", { expectedBase: { branch: "main", sha: main } });
    const aged = await tracedCheckout("skip-4", job, FRESH_MS);
    expect(aged.base).toBe(pushed);
    expect(aged.commands.filter((c) => c === "fetch")).toHaveLength(1);
    const never = await tracedCheckout(
      "skip-4",
      { ...job, runId: "run-skip-4b", expectedBase: { branch: "main", sha: pushed } },
      0,
    );
    expect(never.commands.filter((c) => c === "fetch")).toHaveLength(1);
  });

  it("an older job form without expectedBase still parses and keeps the window alone: fresh skips, aged fetches", async () => {
    const { expectedBase: _none, ...old } = newTask("run-skip-5", "skip-5");
    const parsed = runJobSchema.parse(old);
    expect(parsed.expectedBase).toBeUndefined();
    await mirrorOfAnotherProcess("skip-5");
    const fresh = await tracedCheckout("skip-5", parsed, FRESH_MS);
    expect(fresh.commands.filter((c) => c === "fetch" || c === "clone")).toEqual([]);
    await mirrorOfAnotherProcess("skip-6", FRESH_MS * 2);
    const aged = await tracedCheckout(
      "skip-6",
      { ...parsed, runId: "run-skip-6", projectId: "skip-6" },
      FRESH_MS,
    );
    expect(aged.commands.filter((c) => c === "fetch")).toHaveLength(1);
  });
});
