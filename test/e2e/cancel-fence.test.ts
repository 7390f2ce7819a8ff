/**
 * A cancelled task never moves a ref (issue 19, breach 1), with the real coordinator, real
 * workers, BullMQ, bwrap, git and Postgres. Each case cancels the task at one moment of its
 * reviewer's run — the run whose approve would land on main — and then waits until the run's
 * job has left the queue for good (completed, failed for good, or reported), so a retried
 * job would have had its chance to push. Every ref of the target repository is compared
 * before the cancel and after, and the task must still be cancelled.
 */
import { access, readdir } from "node:fs/promises";
import path from "node:path";
import { sql } from "@overseer/db";
import { runGit } from "@overseer/git";
import { TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask, useTestResources } from "../support/cluster-fixture.ts";
import { startSlowGitServer } from "../support/slow-git-server.ts";
import { waitFor } from "../support/wait-for.ts";

const resources = useTestResources();

/** Every ref of the repository with its value, one `refname sha` line each, sorted. */
async function refsOf(repo: string): Promise<string> {
  const out = await runGit(["for-each-ref", "--format=%(refname) %(objectname)"], { cwd: repo });
  return out.stdout.trim();
}

/** The active run of `action` on the project's task, once Postgres has one. */
async function activeRun(cluster: ClusterFixture, projectId: string, action: string): Promise<string> {
  return waitFor(
    `an active ${action} run of ${projectId}`,
    async () => {
      const row = await cluster.scratch.db
        .selectFrom("runs")
        .select("id")
        .where("project_id", "=", projectId)
        .where("action", "=", action)
        .where("status", "in", ["queued", "running"])
        .executeTakeFirst();
      return row?.id;
    },
    60_000,
    20,
  );
}

/** Resolves once `file` (relative to the run's checkout) exists in the run's directory on the worker. */
async function runWrote(cluster: ClusterFixture, runId: string, file: string): Promise<void> {
  const runs = path.join(cluster.dataDir, "runs");
  await waitFor(
    `run ${runId} to write ${file}`,
    async () => {
      const dirs = (await readdir(runs).catch(() => [])).filter((d) => d.startsWith(`${runId}-`));
      for (const dir of dirs) {
        if (
          await access(path.join(runs, dir, file)).then(
            () => true,
            () => false,
          )
        )
          return true;
      }
      return false;
    },
    60_000,
    20,
  );
}

/**
 * Cancels the task as an operator would. `live: false` leaves the `run.cancelled` event
 * unpublished, as when the worker misses it (Redis pub/sub delivers at most once).
 */
async function cancel(
  cluster: ClusterFixture,
  projectId: string,
  taskId: string,
  live = true,
): Promise<void> {
  const applier = new TransitionApplier({
    db: cluster.scratch.db,
    ...(live ? { live: cluster.live, queues: cluster.queues } : {}),
  });
  await applier.apply(projectId, { kind: "cancel", taskId, by: "operator", reason: "cancel-fence test" });
}

/** Waits until the run's job is done with for good: nothing left to retry or redeliver. */
async function settled(cluster: ClusterFixture, runId: string): Promise<void> {
  await waitFor(
    `the job of run ${runId} to leave the queue`,
    async () => (await cluster.queues.runJobState(runId)).state !== "active",
    90_000,
  );
}

async function taskStatus(cluster: ClusterFixture, projectId: string, taskId: string): Promise<string> {
  const row = await cluster.scratch.db
    .selectFrom("tasks")
    .select("status")
    .where("project_id", "=", projectId)
    .where("id", "=", taskId)
    .executeTakeFirstOrThrow();
  return row.status;
}

/** Many files, so a checkout takes long enough to be cancelled while it is made. */
function bigTree(files: number): Record<string, string> {
  const tree: Record<string, string> = { "README.md": "# big\n" };
  for (let i = 0; i < files; i++) tree[`data/d${i % 50}/f${i}.txt`] = `file ${i}\n`;
  return tree;
}

/**
 * A project whose one task is submitted, then reviewed with `review`; returns its repository
 * and the review run's id once that run is active, with the refs as they stood then.
 */
async function toReview(
  cluster: ClusterFixture,
  id: string,
  review: string,
  extra: { files?: Record<string, string>; runnerConfig?: Record<string, unknown> } = {},
) {
  const repo = await cluster.addProject({
    id,
    tasks: [scriptedTask("S00-001", `execute: write src/a.txt "a"; submit "Add a"\nreview: ${review}`)],
    ...(extra.files ? { files: extra.files } : {}),
    runnerConfig: ClusterFixture.fakeRunnerConfig(extra.runnerConfig ?? {}),
  });
  const reviewRun = await activeRun(cluster, id, "review");
  return { repo, reviewRun };
}

async function runningCluster(workers = 2): Promise<ClusterFixture> {
  const cluster = await resources.cluster({ sandbox: "bwrap" });
  await cluster.startCoordinator();
  for (let i = 0; i < workers; i++) await cluster.startWorker(1);
  return cluster;
}

describe("a cancel at any moment never moves a ref", () => {
  it("queued: the job of a cancelled run is never run", async () => {
    const cluster = await resources.cluster({ sandbox: "bwrap" });
    await cluster.startCoordinator();
    const repo = await cluster.addProject({
      id: "queued",
      tasks: [scriptedTask("S00-001", 'execute: write src/a.txt "a"; submit "Add a"')],
    });
    const run = await activeRun(cluster, "queued", "execute");
    await waitFor("the run's job", async () => (await cluster.queues.runJobState(run)).state === "active");
    const before = await refsOf(repo);
    await cancel(cluster, "queued", "S00-001");
    await cluster.startWorker(1);
    await settled(cluster, run);
    expect(await refsOf(repo)).toBe(before);
    expect(await taskStatus(cluster, "queued", "S00-001")).toBe("cancelled");
  });

  it("checkout: a run cancelled while its checkout is made ends cleanly; no retry lands it", async () => {
    const cluster = await runningCluster();
    const { repo, reviewRun } = await toReview(cluster, "checkout", "approve", { files: bigTree(4000) });
    // The prompt is written just before the worktree is added.
    await runWrote(cluster, reviewRun, "prompt.md");
    const before = await refsOf(repo);
    await cancel(cluster, "checkout", "S00-001");
    await settled(cluster, reviewRun);
    expect(await refsOf(repo)).toBe(before);
    expect(await taskStatus(cluster, "checkout", "S00-001")).toBe("cancelled");
  });

  it("setup hook: a run cancelled during its setup hook moves nothing", async () => {
    const cluster = await runningCluster();
    const hook = 'if [ "$OVERSEER_ACTION" = review ]; then touch .setup-started; sleep 5; fi';
    const { repo, reviewRun } = await toReview(cluster, "setup", "approve", {
      runnerConfig: { hooks: { setup: { argv: ["sh", "-c", hook] } } },
    });
    await runWrote(cluster, reviewRun, "checkout/.setup-started");
    const before = await refsOf(repo);
    await cancel(cluster, "setup", "S00-001");
    await settled(cluster, reviewRun);
    expect(await refsOf(repo)).toBe(before);
    expect(await taskStatus(cluster, "setup", "S00-001")).toBe("cancelled");
  });

  it("agent: a run cancelled while its agent works moves nothing", async () => {
    const cluster = await runningCluster();
    const { repo, reviewRun } = await toReview(
      cluster,
      "agent",
      'write .agent-started "x"; sleep 5; approve',
    );
    await runWrote(cluster, reviewRun, "checkout/.agent-started");
    const before = await refsOf(repo);
    await cancel(cluster, "agent", "S00-001");
    await settled(cluster, reviewRun);
    expect(await refsOf(repo)).toBe(before);
    expect(await taskStatus(cluster, "agent", "S00-001")).toBe("cancelled");
  });

  for (const live of [true, false]) {
    it(`after the transition${live ? "" : ", with the cancel event lost"}: Postgres fences the landing`, async () => {
      const cluster = await runningCluster();
      const id = live ? "after" : "after-lost";
      const hook = 'if [ "$OVERSEER_ACTION" = review ]; then touch .after-run; sleep 3; fi';
      const { repo, reviewRun } = await toReview(cluster, id, "approve", {
        runnerConfig: { hooks: { after_run: { argv: ["sh", "-c", hook] } } },
      });
      // The reviewer has approved and exited; its after_run hook runs before the landing.
      await runWrote(cluster, reviewRun, "checkout/.after-run");
      const before = await refsOf(repo);
      await cancel(cluster, id, "S00-001", live);
      await settled(cluster, reviewRun);
      expect(await refsOf(repo)).toBe(before);
      expect(await taskStatus(cluster, id, "S00-001")).toBe("cancelled");
    });
  }

  it("a retried job after the cancel does nothing, on whichever worker takes it", async () => {
    const cluster = await resources.cluster({ sandbox: "bwrap" });
    await cluster.startCoordinator();
    const first = await cluster.startWorker(1);
    const repo = await cluster.addProject({
      id: "retried",
      tasks: [
        scriptedTask(
          "S00-001",
          'execute: write src/a.txt "a"; submit "Add a"\nreview: write .agent-started "x"; sleep 30; approve',
        ),
      ],
    });
    const reviewRun = await activeRun(cluster, "retried", "review");
    await runWrote(cluster, reviewRun, "checkout/.agent-started");
    // The worker misses the cancel; its job then goes back to the queue (a shutdown hands
    // it back at once) and another worker takes it.
    const before = await refsOf(repo);
    await cancel(cluster, "retried", "S00-001", false);
    await first.stop(0);
    await cluster.startWorker(1);
    await settled(cluster, reviewRun);
    expect(await refsOf(repo)).toBe(before);
    expect(await taskStatus(cluster, "retried", "S00-001")).toBe("cancelled");
  });

  it("during the push: the cancel waits for the landing push, then is refused; Postgres and git agree", async () => {
    const cluster = await runningCluster(1);
    const server = await startSlowGitServer(path.join(cluster.dataDir, "repos"));
    resources.onRelease(async () => {
      server.release();
      await server.close();
    });
    const repo = await cluster.addProject({
      id: "pushing",
      tasks: [scriptedTask("S00-001", 'execute: write src/a.txt "a"; submit "Add a"\nreview: approve')],
      remote: (repoPath) => server.url(repoPath),
    });
    await activeRun(cluster, "pushing", "review");
    // The executor's push is done (its submit made the review); the landing push is held.
    await server.holdPushes();
    const before = await refsOf(repo);
    const refused = cancel(cluster, "pushing", "S00-001").then(
      () => null,
      (error: Error) => error.message,
    );
    await waitFor("the cancel to wait on the pushing run's rows", async () => {
      const waits = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`.execute(cluster.scratch.db);
      return (waits.rows[0]?.n ?? 0) > 0;
    });
    expect(await refsOf(repo)).toBe(before);
    server.release();
    expect(await refused).toMatch(/approved work has already landed/);
    // The run's result finishes the task: the landing and Postgres agree.
    await cluster.waitForProject("pushing", (s) => s.tasks.get("S00-001")?.status === "done", 60_000);
    expect((await runGit(["show", "refs/heads/main:src/a.txt"], { cwd: repo })).stdout).toBe("a");
    expect(await refsOf(repo)).not.toBe(before);
  });
});
