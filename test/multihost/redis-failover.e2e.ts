/**
 * Overseer on Redis in its distributed forms (issue 22, deliverable 7): a Redis Cluster (three
 * primaries, a replica each; `redis-cli --cluster create`) and a primary with a replica under
 * three Sentinels, real `redis-server` processes started here. The coordinator and two workers
 * run as processes configured only through REDIS_CLUSTER_NODES or REDIS_SENTINELS. With runs in
 * flight the primary holding the queues dies (SIGKILL) and a replica takes over: every task
 * still ends done with one submission, one approval and each run finished once, the live
 * channel still carries events, and the worker registry still lists both workers.
 */
import {
  LiveChannel,
  type LiveEvent,
  resolveLiveOptions,
  subscribeWhenReady,
  WorkerRegistry,
} from "@overseer/queue";
import { describe, expect, it } from "vitest";
import { type ClusterFixture, scriptedTask, useTestResources } from "../support/cluster-fixture.ts";
import { expectEachTaskDoneOnce, hasRunning } from "../support/exactly-once.ts";
import { startRedisCluster, startRedisSentinels } from "../support/redis-topology.ts";
import { allTasks, waitFor } from "../support/wait-for.ts";

const resources = useTestResources();
const TASKS = ["S00-001", "S00-002", "S00-003", "S00-004"];

/** Starts a coordinator and two workers as processes, and a project whose runs last ~2 s. */
async function startProject(cluster: ClusterFixture, projectId: string): Promise<void> {
  resources.service("coordinator", cluster.env({ OVERSEER_COORDINATOR_ID: "coord-a" }));
  for (const id of ["worker-a", "worker-b"])
    resources.service("worker", cluster.env({ OVERSEER_WORKER_ID: id, OVERSEER_WORKER_CONCURRENCY: "2" }));
  await cluster.addProject({
    id: projectId,
    concurrency: 4,
    tasks: TASKS.map((id) =>
      scriptedTask(id, `execute: write src/${id}.txt "${id}"; sleep 2; submit "Add ${id}"`, {
        scope: [`src/${id}.txt`],
      }),
    ),
  });
}

/** Collects the project's live events from the Redis pub/sub channel, on its own connection. */
async function watchLive(cluster: ClusterFixture, projectId: string): Promise<LiveEvent[]> {
  const seen: LiveEvent[] = [];
  const subscriber = cluster.redis.duplicate();
  // Refused connections while the primary is down are expected; the client retries.
  subscriber.on("error", () => undefined);
  resources.onRelease(async () => subscriber.disconnect());
  const live = new LiveChannel(cluster.redis, resolveLiveOptions({ prefix: cluster.prefix }));
  subscriber.on("message", (_channel: string, message: string) =>
    seen.push(JSON.parse(message) as LiveEvent),
  );
  await subscribeWhenReady(subscriber, live.eventsChannel(projectId));
  return seen;
}

async function expectWorkersListed(cluster: ClusterFixture): Promise<void> {
  const registry = new WorkerRegistry(cluster.redis, cluster.prefix);
  await waitFor("both workers' heartbeats after the failover", async () => {
    const ids = (await registry.list(5000)).map((w) => w.id);
    return ids.includes("worker-a") && ids.includes("worker-b");
  });
}

describe("Redis in its distributed forms, losing its primary with runs in flight", () => {
  it("Redis Cluster: queues under {prefix} on one slot; the primary of that slot dies and its replica takes over", async () => {
    const redis = await startRedisCluster(3);
    resources.onRelease(() => redis.stop());
    const cluster = await resources.cluster({ redis: redis.target });
    const seen = await watchLive(cluster, "on-cluster");
    await startProject(cluster, "on-cluster");
    await cluster.waitForProject("on-cluster", hasRunning, 60_000);
    const before = seen.length;
    const { killed, promoted } = await redis.killPrimaryFor(`{${cluster.prefix}}`);
    expect(promoted).not.toBe(killed);
    await cluster.waitForProject("on-cluster", (s) => allTasks(s, ["done"]), 180_000);
    await expectEachTaskDoneOnce(cluster.scratch.db, "on-cluster", TASKS);
    expect(seen.length, "live events after the failover").toBeGreaterThan(before);
    await expectWorkersListed(cluster);
  });

  it("Redis Sentinel: the Sentinels promote the replica when the primary dies, and every service follows", async () => {
    const redis = await startRedisSentinels();
    resources.onRelease(() => redis.stop());
    const cluster = await resources.cluster({ redis: redis.target });
    const seen = await watchLive(cluster, "on-sentinel");
    await startProject(cluster, "on-sentinel");
    await cluster.waitForProject("on-sentinel", hasRunning, 60_000);
    const before = seen.length;
    const { killed, promoted } = await redis.killPrimary();
    expect(promoted).not.toBe(killed);
    await cluster.waitForProject("on-sentinel", (s) => allTasks(s, ["done"]), 180_000);
    await expectEachTaskDoneOnce(cluster.scratch.db, "on-sentinel", TASKS);
    expect(seen.length, "live events after the failover").toBeGreaterThan(before);
    await expectWorkersListed(cluster);
  });
});
