/**
 * The worker's choice to skip the pre-checkout fetch of a new task (checkout-phase.ts
 * `refreshMirror`), through a real WorkerService taking real jobs, against a bare remote and a
 * working copy used as the remote. A skip holds only while the mirror's landing branch is at the
 * job's `expectedBase` within OVERSEER_MIRROR_FRESH_MS; a job without one keeps the window rule.
 * Fetches are counted at the remote: the upload-pack processes serving it, from git's own trace.
 */
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { RepoMirror, runGit } from "@overseer/git";
import type { RunJob } from "@overseer/run-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkerRig } from "./support/worker-rig.ts";

const FRESH_MS = 60_000;
const rig = new WorkerRig();
beforeAll(() => rig.setup({ mirrorFreshMs: FRESH_MS }));
afterAll(() => rig.teardown());

type RemoteKind = "bare" | "working copy";

/** A remote of `kind` holding main with src/app.txt "v1\n" (a working copy: a clone of the rig's). */
async function makeRemote(kind: RemoteKind, name: string): Promise<string> {
  if (kind === "bare") return rig.remote;
  const copy = path.join(rig.dir, name);
  await runGit(["clone", "--quiet", "--branch", "main", rig.remote, copy], { cwd: rig.dir });
  return copy;
}

/** Commits src/app.txt = `content` on main of the remote, as a landing or a person elsewhere would. */
async function moveMain(kind: RemoteKind, remote: string, content: string): Promise<string> {
  if (kind === "bare") return rig.commitOnRemote("main", { "src/app.txt": content }, `app ${content.trim()}`);
  const env = {
    GIT_AUTHOR_NAME: "Person",
    GIT_AUTHOR_EMAIL: "person@example.com",
    GIT_COMMITTER_NAME: "Person",
    GIT_COMMITTER_EMAIL: "person@example.com",
  };
  await writeFile(path.join(remote, "src", "app.txt"), content);
  await runGit(["commit", "--quiet", "-am", `app ${content.trim()}`], { cwd: remote, env });
  return (await runGit(["rev-parse", "HEAD"], { cwd: remote })).stdout.trim();
}

/**
 * The project's mirror as another worker process on the host left it: cloned now, its sync
 * record aged by `syncedAgoMs` (the worker itself has no record of its own for the project).
 */
async function mirrorSyncedAgo(projectId: string, remote: string, syncedAgoMs: number): Promise<void> {
  const other = new RepoMirror({ dataDir: rig.dataDir, projectId, remote, gitTimeoutMs: 30_000 });
  await other.ensure();
  if (syncedAgoMs > 0) await other.markSynced(Date.now() - syncedAgoMs);
}

/**
 * Runs a new task's job on the worker with git traced: the app file the agent saw, and how many
 * times the remote served a fetch (an upload-pack started in it).
 */
async function tracedRun(job: RunJob, remote: string): Promise<{ app: string; fetches: number }> {
  const traceDir = await mkdtemp(path.join(rig.dir, "trace-"));
  process.env.GIT_TRACE2_EVENT = traceDir;
  const result = await rig.run(job).finally(() => {
    delete process.env.GIT_TRACE2_EVENT;
  });
  let fetches = 0;
  for (const file of await readdir(traceDir)) {
    for (const line of (await readFile(path.join(traceDir, file), "utf8")).split("\n")) {
      if (!line.includes('"event":"start"')) continue;
      const { argv } = JSON.parse(line) as { argv: string[] };
      if (argv.some((a) => /upload-pack$/.test(a)) && argv.some((a) => path.resolve(a) === remote))
        fetches += 1;
    }
  }
  return { app: result.output.trim(), fetches };
}

describe.each<RemoteKind>(["bare", "working copy"])("a new task's fetch, %s remote", (kind) => {
  let remote = "";
  let n = 0;
  beforeAll(async () => {
    remote = await makeRemote(kind, `remote-${kind.replace(" ", "-")}`);
  });
  /** A new task's job (no branch yet) of a project of its own, whose agent prints the app file. */
  const newTask = () => {
    n += 1;
    const taskId = `S09-${String(n).padStart(3, "0")}`;
    return rig.job("cat src/app.txt", {
      projectId: `fresh-${kind.replace(" ", "-")}-${n}`,
      repo: remote,
      taskId,
      taskBranch: `overseer/task/${taskId}`,
    });
  };

  it("a fresh mirror at expectedBase is not fetched; one behind expectedBase is, and starts from that landing", async () => {
    const atBase = newTask();
    await mirrorSyncedAgo(atBase.projectId, remote, 0);
    const main = (await runGit(["rev-parse", "main"], { cwd: remote })).stdout.trim();
    const skipped = await tracedRun({ ...atBase, expectedBase: { branch: "main", sha: main } }, remote);
    expect(skipped.fetches).toBe(0);

    const behind = newTask();
    await mirrorSyncedAgo(behind.projectId, remote, 0);
    const landed = await moveMain(kind, remote, `landed-${n}\n`);
    const fetched = await tracedRun({ ...behind, expectedBase: { branch: "main", sha: landed } }, remote);
    expect(fetched.fetches).toBe(1);
    expect(fetched.app).toBe(`landed-${n}`);
    expect(skipped.app).not.toBe(fetched.app);
  });

  it("without expectedBase the window alone decides: fresh skips (a push elsewhere goes unseen), aged fetches", async () => {
    const fresh = newTask();
    await mirrorSyncedAgo(fresh.projectId, remote, 0);
    const pushed = `pushed-${n}`;
    await moveMain(kind, remote, `${pushed}\n`);
    const skipped = await tracedRun(fresh, remote);
    expect(skipped.fetches).toBe(0);
    expect(skipped.app).not.toBe(pushed);

    const aged = newTask();
    await mirrorSyncedAgo(aged.projectId, remote, FRESH_MS * 2);
    const fetched = await tracedRun(aged, remote);
    expect(fetched.fetches).toBe(1);
    expect(fetched.app).toBe(pushed);
  });
});
