/**
 * Fault scenario: a worker process holding N runs is killed with SIGKILL; for each run, the
 * time from the kill until Postgres records it running again on another worker
 * (`run.redelivered`). Workers run with the production lock settings (the defaults of
 * OVERSEER_WORKER_LOCK_MS, OVERSEER_WORKER_LOCK_RENEW_MS and OVERSEER_STALLED_INTERVAL_MS).
 */

import { WorkerRegistry } from "@overseer/queue";
import { loadSettings } from "@overseer/settings";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { type ServiceProcess, startService } from "../support/service-process.ts";
import { waitFor } from "../support/wait-for.ts";
import { benchCluster } from "./bench-cluster.ts";
import { type Percentiles, percentiles } from "./stats.ts";

export interface DeadWorkerResult {
  runsInFlight: number;
  settings: { workerLockMs: number; workerLockRenewMs: number; stalledIntervalMs: number };
  /** Kill of the worker → the run recorded running on the survivor, per run. */
  killToRunningAgainMs: Percentiles;
  redelivered: number;
}

export async function benchDeadWorker(runs = 8): Promise<DeadWorkerResult> {
  const defaults = loadSettings({});
  const cluster = await benchCluster();
  const processes: ServiceProcess[] = [];
  try {
    const env = cluster.env();
    // Production lock settings, not the fixture's short test ones.
    delete env.OVERSEER_WORKER_LOCK_MS;
    delete env.OVERSEER_WORKER_LOCK_RENEW_MS;
    delete env.OVERSEER_STALLED_INTERVAL_MS;
    await cluster.startCoordinator();
    const doomed = startService("worker", {
      ...env,
      OVERSEER_WORKER_ID: "bench-doomed",
      OVERSEER_WORKER_CONCURRENCY: String(runs),
    });
    processes.push(doomed);
    const ids = Array.from({ length: runs }, (_, i) => `dead-${i}`);
    for (const id of ids) {
      await cluster.addProject({
        id,
        runnerConfig: ClusterFixture.fakeRunnerConfig({ timeout_seconds: 600 }),
        tasks: [
          {
            id: "S00-001",
            title: "Long run",
            scope: ["src/**"],
            body: '```overseer-fake\nexecute: write src/a.txt "a"; sleep 500; submit "Add a"\n```',
          },
        ],
      });
    }
    const db = cluster.scratch.db;
    const runningOn = async (workerId: string) =>
      (
        await db
          .selectFrom("runs")
          .select("id")
          .where("status", "=", "running")
          .where("worker_id", "=", workerId)
          .execute()
      ).length;
    await waitFor(
      `${runs} runs running on the doomed worker`,
      async () => (await runningOn("bench-doomed")) === runs,
      180_000,
      200,
    );
    const survivor = startService("worker", {
      ...env,
      OVERSEER_WORKER_ID: "bench-survivor",
      OVERSEER_WORKER_CONCURRENCY: String(runs),
    });
    processes.push(survivor);
    const registry = new WorkerRegistry(cluster.redis, cluster.prefix);
    await waitFor(
      "the survivor to take jobs",
      async () => (await registry.list(60_000)).some((w) => w.id === "bench-survivor"),
      120_000,
      200,
    );
    const killedAt = Date.now();
    await doomed.kill("SIGKILL");
    await waitFor(
      `${runs} runs running again`,
      async () => (await runningOn("bench-survivor")) === runs,
      180_000,
      100,
    );
    const events = await db
      .selectFrom("events")
      .select(["run_id", "created_at"])
      .where("type", "=", "run.redelivered")
      .execute();
    return {
      runsInFlight: runs,
      settings: {
        workerLockMs: defaults.workerLockMs,
        workerLockRenewMs: defaults.workerLockRenewMs,
        stalledIntervalMs: defaults.stalledIntervalMs,
      },
      killToRunningAgainMs: percentiles(events.map((e) => e.created_at.getTime() - killedAt)),
      redelivered: events.length,
    };
  } finally {
    await Promise.all(processes.map((p) => p.kill("SIGKILL")));
    await cluster.teardown();
  }
}
