/**
 * Redis memory per running run (issue 22: ≤ 1 KB): what the keys of a cluster's prefix hold
 * (`MEMORY USAGE` of each, after minus before) while its runs run, divided by the runs, with
 * the real coordinator, worker, BullMQ, bwrap and Postgres. A running run keeps its job hash
 * (a listpack: its id, tag and BullMQ's fields, every value within 64 bytes), its lock, its
 * entries in the queue's active list and stalled set, and its entry in its worker's heartbeat.
 * The run queue's BullMQ events stream is capped (~100 entries whatever the runs: run-queue.ts),
 * so it is measured beside the per-run figure, not in it (the scale bench, whose stream is
 * already full when its long runs start, counts it in and finds it flat).
 */
import { describe, expect, it } from "vitest";
import { ClusterFixture, useRunningCluster } from "../support/cluster-fixture.ts";
import { waitFor } from "../support/wait-for.ts";

const RUNS = 8;

/** Every key of the cluster's prefix (`{prefix}:…` queue keys and `prefix:…` others). */
async function prefixKeys(cluster: ClusterFixture): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, found] = await cluster.redis.scan(cursor, "MATCH", `*${cluster.prefix}*`, "COUNT", 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== "0");
  return keys;
}

/** `MEMORY USAGE` of every key of the cluster's prefix, by kind (run ids replaced by `*`). */
async function keyBytes(cluster: ClusterFixture): Promise<Map<string, number>> {
  const kinds = new Map<string, number>();
  for (const key of await prefixKeys(cluster)) {
    const kind = key.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "*");
    const bytes = Number((await cluster.redis.memory("USAGE", key, "SAMPLES", 0)) ?? 0);
    kinds.set(kind, (kinds.get(kind) ?? 0) + bytes);
  }
  return kinds;
}

describe("Redis memory per running run", () => {
  const cluster = useRunningCluster({ sandbox: "bwrap" }, RUNS);

  it(`holds ≤ 1 KB of keys per running run (${RUNS} runs at once)`, async () => {
    const before = await keyBytes(cluster);
    const tasks = Array.from({ length: RUNS }, (_, i) => ({
      id: `S00-${String(i + 1).padStart(3, "0")}`,
      title: `Sleep ${i + 1}`,
      scope: [`src/t${i + 1}/**`],
    }));
    await cluster.addProject({
      id: "memory",
      concurrency: RUNS,
      tasks,
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        argv: ["/bin/sh", "-c", "cat >/dev/null; exec sleep 600"],
        timeout_seconds: 600,
      }),
    });
    const db = cluster.scratch.db;
    const running = async () =>
      (
        await db
          .selectFrom("runs")
          .select(db.fn.countAll<string>().as("n"))
          .where("project_id", "=", "memory")
          .where("status", "=", "running")
          .executeTakeFirstOrThrow()
      ).n;
    await waitFor(`${RUNS} running runs`, async () => Number(await running()) === RUNS, 120_000);
    // Every run is in its worker's heartbeat (written every 500 ms here).
    await waitFor(
      "a heartbeat naming every run",
      async () => {
        const beat = await cluster.redis.hget(`${cluster.prefix}:workers`, "worker-0");
        return beat && (JSON.parse(beat) as { currentJobs: unknown[] }).currentJobs.length === RUNS;
      },
      10_000,
    );
    const after = await keyBytes(cluster);
    const events = [...after].filter(([kind]) => kind.endsWith(":runs:events"));
    const grown = [...after].filter(([kind]) => !kind.endsWith(":runs:events"));
    const delta = (entries: [string, number][]) =>
      entries.reduce((sum, [kind, bytes]) => sum + bytes - (before.get(kind) ?? 0), 0);
    const perRun = delta(grown) / RUNS;
    const breakdown = Object.fromEntries(
      grown.map(([kind, bytes]) => [kind, bytes - (before.get(kind) ?? 0)]).filter(([, b]) => b !== 0),
    );
    console.log(`Redis bytes per running run: ${perRun.toFixed(0)}`, breakdown, { events: delta(events) });
    expect(perRun).toBeLessThanOrEqual(1024);
    const queueKey = (suffix: string) => `{${cluster.prefix}}:runs:${suffix}`;
    expect(await cluster.redis.xlen(queueKey("events"))).toBeLessThanOrEqual(200);
    // Each job hash stays a listpack: every value within Redis's default 64 bytes.
    const jobs = (await prefixKeys(cluster)).filter((key) => /:runs:[0-9a-f-]{36}$/.test(key));
    expect(jobs).toHaveLength(RUNS);
    for (const job of jobs) expect(await cluster.redis.object("ENCODING", job)).toBe("listpack");
  });
});
