/**
 * The checkout phase (checkout-phase.ts) on a real bare repository and mirror: the run's
 * directories and prompt are written beside git's work (heads, worktree), and what it leaves
 * is the same as when they were written one after the other.
 */
import { lstat, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { initBareRepo, RepoMirror, type Worktree } from "@overseer/git";
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

function setup(projectId: string) {
  const mirror = new RepoMirror({ dataDir: path.join(dir, "data"), projectId, remote, gitTimeoutMs: 30_000 });
  const deps = {
    diskLimitBytes: 1024 * 1024 * 1024,
    mirrorFreshness: { lastSync: new Map<string, number>(), freshMs: 0 },
  } as unknown as RunExecutorDeps;
  return { mirror, deps };
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
    expect(await mode(checkout.paths.inputDir)).toBe(0o700);
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
