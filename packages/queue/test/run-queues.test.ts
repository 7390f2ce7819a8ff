import type { RunJob, RunResult } from "@overseer/run-contract";
import { deleteRedisKeys, runJobFixture, runResultFixture, uniqueRedisPrefix } from "@overseer/test-support";
import { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRedis,
  LiveChannel,
  queueKeyPrefix,
  type Redis,
  RUN_QUEUE,
  RunQueues,
  resolveLiveOptions,
  resolveQueueOptions,
  WorkerRegistry,
} from "../src/index.ts";

const prefix = uniqueRedisPrefix("qtest");
let redis: Redis;
let queues: RunQueues;

const job = (runId: string): RunJob => runJobFixture({ runId });

const result = (runId: string): RunResult =>
  runResultFixture({ runId, outcome: { kind: "no-transition", detail: "x", crashed: false } });

beforeAll(() => {
  redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  queues = new RunQueues(redis, resolveQueueOptions({ prefix }));
});

afterAll(async () => {
  await queues.runs.obliterate({ force: true });
  await queues.close();
  await deleteRedisKeys(redis, prefix);
  redis.disconnect();
});

describe("RunQueues", () => {
  it("enqueues a run once however often it is enqueued (job id = run id)", async () => {
    await queues.enqueueRun(job("r1"));
    await queues.enqueueRun(job("r1"));
    expect(await queues.runs.getJobCountByTypes("waiting")).toBe(1);
    expect((await queues.runJobState("r1")).state).toBe("active");
    expect((await queues.runJobState("nope")).state).toBe("missing");
  });

  it("refuses a malformed payload before it reaches Redis", async () => {
    await expect(queues.enqueueRun({ ...job("r2"), timeoutMs: -1 })).rejects.toThrow(/timeoutMs/);
    expect((await queues.runJobState("r2")).state).toBe("missing");
  });

  it("a reported result counts; one read but never acknowledged is taken again, by another coordinator too", async () => {
    await queues.enqueueRun(job("r3"));
    await queues.reportResult(result("r3"));
    expect(await queues.hasResult("r3")).toBe(true);
    expect((await queues.runJobState("r3")).state).toBe("reported");
    expect(await queues.hasResult("r4")).toBe(false);
    const stream = queues.results;
    await stream.ensureGroup();
    const reader = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    try {
      // Coordinator "a" reads it, then dies (or fails to apply it): no acknowledgement.
      const [read] = await stream.read(reader, "a", 10, 100);
      expect(read?.message).toMatchObject({ kind: "run-result", runId: "r3" });
      expect(await stream.read(reader, "a", 10, 100)).toEqual([]);
      expect((await queues.counts()).results).toMatchObject({ waiting: 0, active: 1 });
      expect(await stream.claimStale("b", 60_000, 10)).toEqual([]);
      await new Promise((r) => setTimeout(r, 50));
      const [again] = await stream.claimStale("b", 20, 10);
      expect(again).toEqual(read);
      await stream.ack(again?.id ?? "");
      expect(await stream.claimStale("b", 0, 10)).toEqual([]);
      expect(await stream.messages()).toEqual([]);
      expect(await stream.countFailure("r3")).toBe(1);
      expect(await stream.countFailure("r3")).toBe(2);
    } finally {
      reader.disconnect();
    }
  });

  it("with a plain connection, results go over it and BullMQ's scripts stay off it", async () => {
    const own = `${prefix}-plain`;
    const plain = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    const split = new RunQueues(redis, resolveQueueOptions({ prefix: own }), undefined, plain);
    try {
      await split.enqueueRun(job("p1"));
      await split.reportResult(result("p1"));
      expect(await split.hasResult("p1")).toBe(true);
      expect(await split.results.messages()).toEqual([expect.objectContaining({ runId: "p1" })]);
      // What ioredis copies into every pipeline: none on the plain connection.
      expect(Object.keys((plain as unknown as { scriptsSet: object }).scriptsSet)).toEqual([]);
      expect(Object.keys((redis as unknown as { scriptsSet: object }).scriptsSet).length).toBeGreaterThan(10);
    } finally {
      await split.runs.obliterate({ force: true });
      await split.close();
      await deleteRedisKeys(redis, own);
      plain.disconnect();
    }
  });
});

describe("run job ownership", () => {
  it("a delivery owns its job only while the lock holds its token; a lapsed lock moves the job to another worker", async () => {
    const own = `${prefix}-own`;
    const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
    const ownQueues = new RunQueues(redis, resolveQueueOptions({ prefix: own }));
    const workers: Worker[] = [];
    const connections: Redis[] = [];
    const tokens: { worker: string; token: string }[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const delivered = (count: number) =>
      new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (tokens.length >= count) {
            clearInterval(check);
            resolve();
          }
        }, 20);
      });
    const start = (name: string, options: Record<string, unknown>) => {
      const connection = createRedis(url);
      connections.push(connection);
      const w = new Worker(
        RUN_QUEUE,
        async (_job, token) => {
          tokens.push({ worker: name, token: token ?? "" });
          await held;
        },
        { connection, prefix: queueKeyPrefix(own), lockDuration: 1000, stalledInterval: 300, ...options },
      );
      w.on("error", () => undefined);
      workers.push(w);
    };
    try {
      // "frozen" never renews its lock (as a stopped process); "live" finds the lapsed job.
      start("frozen", { skipLockRenewal: true, skipStalledCheck: true });
      await ownQueues.enqueueRun(job("own-1"));
      await delivered(1);
      const first = tokens[0]?.token ?? "";
      expect(await ownQueues.holdsRunLock("own-1", first)).toBe(true);
      expect(await ownQueues.holdsRunLock("own-1", "someone-else")).toBe(false);
      start("live", { lockRenewTime: 250 });
      await delivered(2);
      expect(tokens.map((t) => t.worker)).toEqual(["frozen", "live"]);
      const second = tokens[1]?.token ?? "";
      expect(await ownQueues.holdsRunLock("own-1", first)).toBe(false);
      expect(await ownQueues.holdsRunLock("own-1", second)).toBe(true);
    } finally {
      release();
      await Promise.all(workers.map((w) => w.close(true)));
      for (const c of connections) c.disconnect();
      await ownQueues.runs.obliterate({ force: true }).catch(() => undefined);
      await ownQueues.close();
      await deleteRedisKeys(redis, own);
    }
  });
});

describe("LiveChannel and WorkerRegistry", () => {
  it("appends and reads a run's log stream, resumable by entry id", async () => {
    const live = new LiveChannel(redis, resolveLiveOptions({ prefix }));
    await live.appendLog("run-x", "one\n");
    await live.appendLog("run-x", "two\n");
    const all = await live.readLog("run-x");
    expect(all.map((e) => e.data)).toEqual(["one\n", "two\n"]);
    const rest = await live.readLog("run-x", all[0]?.id);
    expect(rest.map((e) => e.data)).toEqual(["two\n"]);
  });

  it("lists live workers and drops stale heartbeats", async () => {
    const registry = new WorkerRegistry(redis, prefix);
    const beat = {
      host: "h",
      pid: 1,
      slots: 2,
      pools: ["default"],
      draining: false,
      sandbox: "bwrap",
      unsafe: false,
      currentJobs: [],
      startedAt: 0,
    };
    await registry.beat({ ...beat, id: "fresh", heartbeatAt: Date.now() });
    await registry.beat({ ...beat, id: "stale", heartbeatAt: Date.now() - 60_000 });
    expect((await registry.list(10_000)).map((w) => w.id)).toEqual(["fresh"]);
    expect(await redis.hexists(`${prefix}:workers`, "stale")).toBe(0);
  });

  it("answers a worker's heartbeat with the drain an operator asked of it, until it is removed", async () => {
    const registry = new WorkerRegistry(redis, prefix);
    const beat = {
      id: "w-drain",
      host: "h",
      pid: 1,
      slots: 1,
      pools: ["jdk"],
      draining: false,
      sandbox: "bwrap",
      unsafe: false,
      currentJobs: [],
      startedAt: 0,
      heartbeatAt: Date.now(),
    };
    expect(await registry.beat(beat)).toEqual({ drainRequested: false });
    await registry.requestDrain("w-drain");
    expect(await registry.beat(beat)).toEqual({ drainRequested: true });
    await registry.remove("w-drain");
    expect((await registry.list(10_000)).map((w) => w.id)).not.toContain("w-drain");
    // A fresh worker with the same id (restarted by its supervisor) is not drained again.
    expect(await registry.beat(beat)).toEqual({ drainRequested: false });
  });

  it("counts run jobs per worker pool, and their sum", async () => {
    const queues = new RunQueues(redis, resolveQueueOptions({ prefix }));
    await queues.runQueue("jdk").add("run", { x: 1 }, { jobId: "run-pool-count-1" });
    await queues.runQueue("jdk").add("run", { x: 2 }, { jobId: "run-pool-count-2" });
    await queues.runs.add("run", { x: 3 }, { jobId: "run-pool-count-3" });
    const counts = await queues.counts(["jdk", "gpu"]);
    expect(counts.pools.jdk?.waiting).toBe(2);
    expect(counts.pools.gpu?.waiting).toBe(0);
    expect(counts.pools.default?.waiting).toBeGreaterThanOrEqual(1);
    expect(counts.runs.waiting).toBe((counts.pools.default?.waiting ?? 0) + 2);
    await queues.close();
  });
});
