/**
 * Redis memory per running run at the issue's size (issue 22: ≤ 1 KB at 500 concurrent runs),
 * at the queue level: 500 run references queued as coordinators queue them (RunQueues), held by
 * four pool workers of 125 slots (PoolWorker, BullMQ locks renewed, stalled checks on), and the
 * four workers' heartbeats naming their runs (WorkerRegistry, in WorkerService's form). What the
 * prefix's keys hold (`MEMORY USAGE`, after minus before) over the runs: the job hashes, their
 * locks, the active list, the stalled set and the heartbeat entries. The run queue's BullMQ
 * events stream is capped (~100 entries whatever the runs), so it is reported beside.
 * test/e2e/run-redis-memory.test.ts measures the same with the real services and sandboxes.
 */
import { randomUUID } from "node:crypto";
import {
  createRedis,
  queueKeyPrefix,
  type Redis,
  RunQueues,
  resolveQueueOptions,
  type WorkerHeartbeat,
  WorkerRegistry,
} from "@overseer/queue";
import { deleteRedisKeys, uniqueRedisPrefix } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PoolWorker } from "../src/pool-worker.ts";
import { SlotGate } from "../src/slot-gate.ts";

const RUNS = 500;
const WORKERS = 4;
const SLOTS = RUNS / WORKERS;
const prefix = uniqueRedisPrefix("keys");
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
let redis: Redis;
let queues: RunQueues;
const closers: (() => Promise<void>)[] = [];

beforeAll(() => {
  redis = createRedis(url);
  queues = new RunQueues(redis, resolveQueueOptions({ prefix }));
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await queues.runs.obliterate({ force: true });
  await queues.close();
  await deleteRedisKeys(redis, prefix);
  redis.disconnect();
});

/** `MEMORY USAGE` of every key of the prefix, by key. */
async function keyBytes(): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `*${prefix}*`, "COUNT", 1000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.memory("USAGE", key, "SAMPLES", 0);
    const replies = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      sizes.set(key, Number(replies[i]?.[1] ?? 0));
    });
  } while (cursor !== "0");
  return sizes;
}

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("Redis keys per running run at scale", () => {
  it(`hold ≤ 1 KB per running run with ${RUNS} runs on ${WORKERS} workers`, async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held = new Map<string, string[]>();
    for (let w = 0; w < WORKERS; w++) {
      const connection = createRedis(url);
      const id = `scale-w${w}`;
      held.set(id, []);
      const worker = new PoolWorker(
        "runs",
        async (job) => {
          held.get(id)?.push(job.id ?? "");
          await released;
        },
        queues.runJobPolicy,
        { connection, prefix: queueKeyPrefix(prefix), concurrency: SLOTS, stalledInterval: 500 },
        new SlotGate(SLOTS),
      );
      closers.push(async () => {
        release();
        await worker.close();
        connection.disconnect();
      });
    }
    const registry = new WorkerRegistry(redis, prefix);
    const beat = (id: string, runIds: readonly string[], since: number) => {
      const heartbeat: WorkerHeartbeat = {
        id,
        host: "worker-host-0",
        pid: 4242,
        slots: SLOTS,
        pools: ["default"],
        draining: false,
        sandbox: "bwrap",
        unsafe: false,
        currentJobs: runIds.map((runId, i) => ({
          runId,
          projectId: `scale-${i}`,
          taskId: "S00-001",
          action: "execute",
          since,
        })),
        startedAt: since,
        heartbeatAt: Date.now(),
      };
      return registry.beat(heartbeat);
    };
    const since = Date.now();
    for (const id of held.keys()) await beat(id, [], since);
    const before = await keyBytes();

    const projects = Array.from({ length: RUNS }, (_, i) => `scale-${i}`);
    await Promise.all(
      projects.map((projectId) =>
        queues.enqueueRun({ v: 1, kind: "run-ref", runId: randomUUID(), projectId, pool: "default" }),
      ),
    );
    await until("every run held", async () => (await queues.runs.getActiveCount()) === RUNS);
    const stalled = `${queueKeyPrefix(prefix)}:runs:stalled`;
    await until("a stalled check over every run", async () => (await redis.scard(stalled)) === RUNS);
    for (const [id, runIds] of held) await beat(id, runIds, since);
    const after = await keyBytes();

    const byKind = new Map<string, number>();
    for (const [key, bytes] of after) {
      const kind = key.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "*");
      byKind.set(kind, (byKind.get(kind) ?? 0) + bytes - (before.get(key) ?? 0));
    }
    const events = [...byKind].filter(([kind]) => kind.endsWith(":runs:events"));
    const perRun = [...byKind].filter(([kind]) => !kind.endsWith(":runs:events"));
    const total = (entries: [string, number][]) => entries.reduce((sum, [, bytes]) => sum + bytes, 0);
    console.log(
      `Redis bytes per running run at ${RUNS}: ${(total(perRun) / RUNS).toFixed(0)}`,
      Object.fromEntries(perRun.map(([kind, bytes]) => [kind, Math.round(bytes / RUNS)])),
      { eventsStreamBytes: total(events) },
    );
    expect(total(perRun) / RUNS).toBeLessThanOrEqual(1024);
    expect(await redis.xlen(`${queueKeyPrefix(prefix)}:runs:events`)).toBeLessThanOrEqual(200);
  });
});
