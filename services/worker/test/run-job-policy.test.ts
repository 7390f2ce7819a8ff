/**
 * The run job policy on the worker (pool-worker.ts): a run job carries no options of its own
 * (run-queue.ts stores a reference by id, `opts` only its id), so its worker applies the
 * queues' attempts and exponential backoff after an infrastructure failure, removes a completed
 * job and keeps a failed one; a job queued with options of its own (an older coordinator) keeps
 * them, and so does a job queued under the former id (`run-<runId>`), whose lock the worker
 * checks by that id. Real Redis and BullMQ.
 */
import {
  createRedis,
  legacyRunJobId,
  queueKeyPrefix,
  type Redis,
  RunQueues,
  resolveQueueOptions,
  runJobId,
} from "@overseer/queue";
import { deleteRedisKeys, uniqueRedisPrefix } from "@overseer/test-support";
import type { Job } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PoolWorker } from "../src/pool-worker.ts";
import { SlotGate } from "../src/slot-gate.ts";

const prefix = uniqueRedisPrefix("policy");
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
let redis: Redis;
let queues: RunQueues;
const closers: (() => Promise<void>)[] = [];

beforeAll(() => {
  redis = createRedis(url);
  queues = new RunQueues(redis, resolveQueueOptions({ prefix, infraAttempts: 3, infraBackoffMs: 200 }));
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

afterAll(async () => {
  await queues.runs.obliterate({ force: true });
  await queues.close();
  await deleteRedisKeys(redis, prefix);
  redis.disconnect();
});

/** A pool worker of the default run queue whose deliveries `process` handles. */
function worker(process: (job: Job, token: string | undefined) => Promise<void>): PoolWorker {
  const connection = createRedis(url);
  const pool = new PoolWorker(
    "runs",
    process,
    queues.runJobPolicy,
    { connection, prefix: queueKeyPrefix(prefix), concurrency: 2, stalledInterval: 30_000 },
    new SlotGate(2),
  );
  closers.push(async () => {
    await pool.close();
    connection.disconnect();
  });
  return pool;
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("run job policy", () => {
  it("retries an infrastructure failure with the queues' attempts and doubling backoff; a completed job goes", async () => {
    const tries = new Map<string, number[]>();
    worker(async (job) => {
      const at = [...(tries.get(job.id ?? "") ?? []), Date.now()];
      tries.set(job.id ?? "", at);
      if (job.id === runJobId("flaky") && at.length < 3) throw new Error("git remote down");
      if (job.id === runJobId("broken")) throw new Error("disk full");
    });
    await queues.enqueueRun({ v: 1, kind: "run-ref", runId: "flaky", pool: "default" });
    await queues.enqueueRun({ v: 1, kind: "run-ref", runId: "broken", pool: "default" });
    // Nothing of the policy is stored on the job: only its id (and BullMQ's default attempts).
    const opts = await redis.hget(queues.runs.toKey(runJobId("flaky")), "opts");
    expect(JSON.parse(opts ?? "null")).toEqual({ jobId: runJobId("flaky"), attempts: 0 });

    await until("flaky's third try", async () => (await queues.runJobState("flaky")).state === "missing");
    const flaky = tries.get(runJobId("flaky")) ?? [];
    expect(flaky).toHaveLength(3);
    // 200 ms, then 400 ms: the backoff doubles (BullMQ's delayed set is checked on time).
    expect((flaky[1] ?? 0) - (flaky[0] ?? 0)).toBeGreaterThanOrEqual(190);
    expect((flaky[2] ?? 0) - (flaky[1] ?? 0)).toBeGreaterThanOrEqual(390);
    expect(await redis.exists(queues.runs.toKey(runJobId("flaky")))).toBe(0);

    const broken = await until("broken to fail for good", async () => {
      const state = await queues.runJobState("broken");
      return state.state === "failed" ? state : null;
    });
    expect(broken.failedReason).toBe("disk full");
    expect(tries.get(runJobId("broken"))).toHaveLength(3);
    // Kept a week (removeOnFail by age), for the reconcile and the operator.
    expect(await redis.ttl(queues.runs.toKey(runJobId("broken")))).toBe(-1);
  });

  it("a job queued with its own options and the former id keeps them; its lock is checked by that id", async () => {
    const tries: string[] = [];
    let held: { jobId: string; token: string } | null = null;
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    worker(async (job, token) => {
      tries.push(job.id ?? "");
      if (job.id === legacyRunJobId("old-lock")) {
        held = { jobId: job.id, token: token ?? "" };
        await released;
        return;
      }
      throw new Error("git remote down");
    });
    const legacy = (runId: string, opts: object) =>
      queues.runs.add(
        "run",
        { v: 1, kind: "run-ref", runId, projectId: "p", pool: "default" },
        { jobId: legacyRunJobId(runId), ...opts },
      );
    await legacy("old-once", { attempts: 1, removeOnFail: { age: 60 } });
    await legacy("old-lock", {});
    const failed = await until("the old job to fail", async () => {
      const state = await queues.runJobState("old-once");
      return state.state === "failed" ? state : null;
    });
    expect(failed.failedReason).toBe("git remote down");
    expect(tries.filter((id) => id === legacyRunJobId("old-once"))).toHaveLength(1);

    const owner = await until("the old job's delivery", async () => held);
    expect((await queues.runJobState("old-lock")).state).toBe("active");
    expect(await queues.holdsRunLock(owner.jobId, owner.token)).toBe(true);
    expect(await queues.holdsRunLock(runJobId("old-lock"), owner.token)).toBe(false);
    release();
  });
});
