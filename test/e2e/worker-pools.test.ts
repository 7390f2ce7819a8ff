/**
 * Worker pools through the whole cluster (docs/runner-config.md#worker-pools): real worker and
 * gateway processes, a coordinator, Postgres, a private Redis (this test flushes it), git and
 * bwrap. A project on pool `jdk` waits, visibly, while only a default worker is live; its queue
 * is rebuilt from Postgres after a FLUSHALL; a jdk worker then runs it. A default-pool project
 * is unaffected meanwhile.
 */
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
    resources.service("worker", { ...env, OVERSEER_WORKER_ID: "plain-1" });
    const gateway = await startGatewayProcess({ ...env, LOG_LEVEL: "info" });
    resources.onRelease(async () => void (await gateway.service.kill("SIGTERM")));
    const token = (await createApiToken(cluster.scratch.db, { name: "reader", scope: "read" })).token;

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
    const lines: string[] = [];
    const io = {
      out: (l: string) => lines.push(l),
      err: (l: string) => lines.push(l),
      env: { OVERSEER_URL: gateway.url, OVERSEER_TOKEN: token },
      cwd: REPO_ROOT,
    };
    expect(await runCli(["status", "--project", "jdkp"], io)).toBe(0);
    expect(lines.join("\n")).toContain("waiting for a worker in pool jdk");

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

    resources.service("worker", {
      ...env,
      OVERSEER_WORKER_ID: "jdk-1",
      OVERSEER_WORKER_POOLS: "jdk",
      OVERSEER_DATA_DIR: path.join(cluster.dataDir, "jdk-worker"),
    });
    await cluster.waitForProject("jdkp", (s) => allTasks(s, ["done"]), 60_000);
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
  });
});
