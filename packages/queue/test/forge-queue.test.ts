/**
 * The forge queue against a real Redis: what is asked for while its job runs is not lost (one
 * re-run follows it), and two jobs of one identity (a task's sync, ensure or merge) never run
 * at the same time, however many workers take jobs.
 */
import type { ForgeJob } from "@overseer/run-contract";
import { deleteRedisKeys, uniqueRedisPrefix } from "@overseer/test-support";
import { type Job, Worker } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRedis, FORGE_QUEUE, ForgeQueue, queueKeyPrefix, type Redis } from "../src/index.ts";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
let redis: Redis;
let workerConnection: Redis;
let prefix: string;
let queue: ForgeQueue;
let worker: Worker | null = null;

const sync = (taskId = "T-1"): ForgeJob => ({ v: 1, kind: "sync", projectId: "p", taskId });
const merge = (headSha: string): ForgeJob => ({
  v: 1,
  kind: "merge",
  projectId: "p",
  taskId: "T-1",
  headSha,
});

/** A gate a test opens to let a running job finish. */
function gate(): { wait: Promise<void>; open(): void } {
  let open = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A worker that records each job it runs and holds it until its gate opens. */
function startWorker(concurrency: number, fail = false) {
  const started: ForgeJob[] = [];
  const gates: { open(): void }[] = [];
  let running = 0;
  let maxRunning = 0;
  worker = new Worker(
    FORGE_QUEUE,
    async (job: Job<ForgeJob>) => {
      started.push(job.data);
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      const g = gate();
      gates.push(g);
      await g.wait;
      running -= 1;
      if (fail) throw new Error("the forge is down");
    },
    { connection: workerConnection, prefix: queueKeyPrefix(prefix), concurrency },
  );
  worker.on("failed", (job) => {
    if (job) void queue.noteFailed(job);
  });
  return {
    started,
    openAll: () => {
      for (const g of gates.splice(0)) g.open();
    },
    maxRunning: () => maxRunning,
  };
}

beforeAll(() => {
  redis = createRedis(url);
  workerConnection = createRedis(url);
});

afterEach(async () => {
  await worker?.close(true);
  worker = null;
  await queue.queue.obliterate({ force: true });
  await queue.close();
  await deleteRedisKeys(redis, prefix);
});

afterAll(() => {
  redis.disconnect();
  workerConnection.disconnect();
});

function newQueue(options: { attempts?: number; retryAfterMs?: number } = {}): ForgeQueue {
  prefix = uniqueRedisPrefix("forgeq");
  queue = new ForgeQueue(redis, { prefix, backoffMs: 10, ...options });
  return queue;
}

describe("ForgeQueue", () => {
  it("a sync asked for while one runs runs once more after it, never alongside it", async () => {
    newQueue();
    const w = startWorker(4);
    await queue.add(sync());
    await until(() => w.started.length === 1, "the first sync to start");
    // Asked three times while it runs (it may have read Postgres before what asked committed).
    await queue.add(sync());
    await queue.add(sync());
    await queue.addPoll("p", "T-1", 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(w.started).toHaveLength(1);
    w.openAll();
    await until(() => w.started.length === 2, "the re-run");
    w.openAll();
    await new Promise((resolve) => setTimeout(resolve, 300));
    w.openAll();
    expect(w.started).toHaveLength(2);
    expect(w.maxRunning()).toBe(1);
  });

  it("asks while a job waits are one job; other tasks' syncs run alongside", async () => {
    newQueue();
    await queue.add(sync("T-1"));
    await queue.add(sync("T-1"));
    await queue.addPoll("p", "T-1", 60_000);
    await queue.add(sync("T-2"));
    expect(await queue.queue.getJobCountByTypes("waiting", "delayed")).toBe(2);
    const w = startWorker(4);
    await until(() => w.started.length === 2, "both tasks' syncs");
    expect(w.maxRunning()).toBe(2);
    w.openAll();
  });

  it("a waiting poll gives way to a sync asked for now", async () => {
    newQueue();
    await queue.addPoll("p", "T-1", 60_000);
    await queue.add(sync());
    expect(await queue.queue.getJobCountByTypes("delayed")).toBe(0);
    expect(await queue.queue.getJobCountByTypes("waiting")).toBe(1);
  });

  it("a task's merge for a newer head waits for the running one (one merge per task at a time)", async () => {
    newQueue();
    const w = startWorker(4);
    await queue.add(merge("aaa"));
    await until(() => w.started.length === 1, "the first merge");
    await queue.add(merge("bbb"));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(w.started).toHaveLength(1);
    w.openAll();
    await until(() => w.started.length === 2, "the merge of the newer head");
    w.openAll();
    expect(w.started.map((j) => (j.kind === "merge" ? j.headSha : null))).toEqual(["aaa", "bbb"]);
    expect(w.maxRunning()).toBe(1);
  });

  it("a job that failed for good runs again by itself after retryAfterMs; asks meanwhile are that job", async () => {
    newQueue({ attempts: 1, retryAfterMs: 1000 });
    const w = startWorker(1, true);
    await queue.add(sync());
    await until(() => w.started.length === 1, "the first sync");
    w.openAll();
    await until(async () => (await queue.queue.getJobCountByTypes("delayed")) === 1, "the delayed retry");
    const failedAt = Date.now();
    await queue.add(sync());
    await queue.addPoll("p", "T-1", 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(w.started).toHaveLength(1);
    await until(() => w.started.length === 2, "the retry");
    expect(Date.now() - failedAt).toBeGreaterThanOrEqual(600);
    w.openAll();
    await until(async () => (await queue.queue.getJobCountByTypes("delayed")) === 1, "the next retry");
    expect(await queue.queue.getJobCountByTypes("waiting")).toBe(0);
  });
});
