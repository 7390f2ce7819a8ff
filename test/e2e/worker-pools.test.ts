/**
 * Worker pools through the whole cluster (docs/runner-config.md#worker-pools): real worker and
 * gateway processes, a coordinator, Postgres, a private Redis (this test flushes it), git and
 * bwrap. A project on pool `jdk` waits, visibly, while only a default worker is live; its queue
 * is rebuilt from Postgres after a FLUSHALL; a jdk worker then runs it. A default-pool project
 * is unaffected meanwhile. Queue depths (API and metrics) count the jdk pool's queue too;
 * `overseer workers` lists each worker's pools, and `overseer workers drain` stops the jdk one
 * gracefully (its process exits 0, its pool is unserved again).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "@overseer/cli";
import { createApiToken } from "@overseer/db";
import { describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask, useTestResources } from "../support/cluster-fixture.ts";
import { startGatewayProcess } from "../support/gateway-process.ts";
import { startPrivateRedis } from "../support/private-redis.ts";
import { REPO_ROOT } from "../support/service-process.ts";
import { allTasks, waitFor } from "../support/wait-for.ts";

const resources = useTestResources();

describe("worker pools", () => {
  it("a jdk project waits for a worker in pool jdk (API and overseer status), survives FLUSHALL, and runs once a jdk worker joins", async () => {
    const redis = await startPrivateRedis();
    resources.onRelease(redis.stop);
    const cluster = await resources.cluster({ redisUrl: redis.url });
    const env = cluster.env();
    await cluster.startCoordinator();
    const plainWorker = resources.service("worker", { ...env, OVERSEER_WORKER_ID: "plain-1" });
    const gateway = await startGatewayProcess({ ...env, LOG_LEVEL: "info" });
    resources.onRelease(async () => void (await gateway.service.kill("SIGTERM")));
    const token = (await createApiToken(cluster.scratch.db, { name: "reader", scope: "read" })).token;
    const admin = (await createApiToken(cluster.scratch.db, { name: "admin", scope: "admin" })).token;
    const get = async (route: string) =>
      fetch(`${gateway.url}${route}`, { headers: { Authorization: `Bearer ${token}` } });

    await cluster.addProject({
      id: "jdkp",
      runnerConfig: ClusterFixture.fakeRunnerConfig({ pool: "jdk" }),
      tasks: [scriptedTask("S00-001", 'execute: write src/a.txt "a"; submit "Add a"')],
    });
    await cluster.addProject({
      id: "plainp",
      tasks: [scriptedTask("S00-001", 'execute: write src/b.txt "b"; submit "Add b"')],
    });
    // The default pool is served: its project completes while the jdk one waits.
    await cluster.waitForProject("plainp", (s) => allTasks(s, ["done"]), 60_000);
    // Workers run below the gateway (OVERSEER_WORKER_NICE, default 10).
    expect(niceOf(plainWorker.child.pid)).toBe(niceOf(gateway.service.child.pid) + 10);

    const status = async () => {
      const res = await fetch(`${gateway.url}/api/projects/jdkp/status`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      return (await res.json()) as { pool: string; pool_waiting: string | null; text: string };
    };
    const waiting = await waitFor("the jdk project to wait for its pool", async () => {
      const s = await status();
      return s.pool_waiting ? s : null;
    });
    expect(waiting?.pool).toBe("jdk");
    expect(waiting?.pool_waiting).toBe("waiting for a worker in pool jdk");
    const cli = async (args: string[], bearer = token) => {
      const lines: string[] = [];
      const io = {
        out: (l: string) => lines.push(l),
        err: (l: string) => lines.push(l),
        env: { OVERSEER_URL: gateway.url, OVERSEER_TOKEN: bearer },
        cwd: REPO_ROOT,
      };
      return { code: await runCli(args, io), out: lines.join("\n") };
    };
    const status0 = await cli(["status", "--project", "jdkp"]);
    expect(status0.code).toBe(0);
    expect(status0.out).toContain("waiting for a worker in pool jdk");
    // Depths count every pool: the jdk job waits in its own queue, no worker serving it.
    const queues = (await (await get("/api/v1/queues")).json()) as {
      runs: Record<string, number>;
      pools: Record<string, Record<string, number>>;
    };
    expect(queues.pools.jdk?.waiting).toBe(1);
    expect(queues.runs.waiting).toBeGreaterThanOrEqual(1);
    expect(await (await get("/metrics")).text()).toContain(
      'overseer_queue_jobs{queue="runs-jdk",state="waiting"} 1',
    );

    const jdkQueue = cluster.queues.runQueue("jdk");
    const [run] = await cluster.scratch.db
      .selectFrom("runs")
      .select(["id", "pool", "status"])
      .where("project_id", "=", "jdkp")
      .execute();
    expect(run).toMatchObject({ pool: "jdk", status: "queued" });
    expect(await jdkQueue.getJobCountByTypes("waiting")).toBe(1);
    // Redis lost: the coordinator's reconcile puts the run back in its pool's queue from Postgres.
    await cluster.redis.flushall();
    await waitFor("the jdk queue rebuilt", async () => (await jdkQueue.getJobCountByTypes("waiting")) === 1);
    expect(await cluster.queues.runQueue("default").getJobCountByTypes("waiting")).toBe(0);

    const jdkWorker = resources.service("worker", {
      ...env,
      OVERSEER_WORKER_ID: "jdk-1",
      OVERSEER_WORKER_POOLS: "jdk",
      OVERSEER_DATA_DIR: path.join(cluster.dataDir, "jdk-worker"),
      OVERSEER_WORKER_NICE: "0",
    });
    await cluster.waitForProject("jdkp", (s) => allTasks(s, ["done"]), 60_000);
    expect(niceOf(jdkWorker.child.pid)).toBe(niceOf(process.pid));
    const runs = await cluster.scratch.db
      .selectFrom("runs")
      .select(["worker_id", "pool"])
      .where("project_id", "=", "jdkp")
      .execute();
    // Its execute and its review, both in pool jdk, both on the jdk worker.
    expect(runs.map((r) => [r.worker_id, r.pool])).toEqual([
      ["jdk-1", "jdk"],
      ["jdk-1", "jdk"],
    ]);
    expect((await status()).pool_waiting).toBeNull();

    const listed = await cli(["workers"]);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(/jdk-1\s+jdk\s+\d\/2\s+taking jobs\s+bwrap/);
    expect(listed.out).toMatch(/plain-1\s+default\s+0\/2\s+taking jobs\s+bwrap/);
    // Draining is an admin's: a read token is refused.
    expect((await cli(["workers", "drain", "jdk-1"])).code).not.toBe(0);
    const drained = await cli(["workers", "drain", "jdk-1"], admin);
    expect(drained.code, drained.out).toBe(0);
    expect(drained.out).toContain("asked jdk-1 (pools jdk) to drain");
    // Seen at its next heartbeat: it stops as on SIGTERM and exits 0; its pool is unserved again.
    expect(await jdkWorker.exited).toBe(0);
    expect((await cli(["workers", "--pool", "jdk"])).out).toContain("no live worker in pool jdk");
    const unknown = await cli(["workers", "drain", "jdk-1"], admin);
    expect(unknown.code).not.toBe(0);
    expect(unknown.out).toContain("No live worker jdk-1");
  });
});

/** A process's niceness (field 19 of /proc/<pid>/stat). */
function niceOf(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}
