/**
 * Worker pools (worker-service.ts, slot-gate.ts): a run job waits in its pool's queue for a
 * worker that serves the pool, and a worker serving several pools runs at most its concurrency
 * at once across all of them. Real Redis (BullMQ), real bwrap sandboxes, real git.
 */
import { runQueueName } from "@overseer/queue";
import { type RunResult, runResultSchema } from "@overseer/run-contract";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerRig } from "./support/worker-rig.ts";

const rigs: WorkerRig[] = [];
afterEach(async () => {
  for (const rig of rigs.splice(0).reverse()) await rig.teardown();
});

async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function resultOf(rig: WorkerRig, runId: string): Promise<RunResult> {
  return until(`the result of ${runId}`, async () => {
    const result = await rig.reportedResult(runId);
    return result ? runResultSchema.parse(result) : null;
  });
}

/** The most intervals [pickedAt, reportedAt] that overlap at one moment. */
function mostAtOnce(results: readonly RunResult[]): number {
  const edges = results.flatMap((r) => [
    { at: r.timing.pickedAt, step: 1 },
    { at: r.timing.reportedAt, step: -1 },
  ]);
  // An end before a start at the same instant: touching runs do not overlap.
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let now = 0;
  let most = 0;
  for (const edge of edges) {
    now += edge.step;
    most = Math.max(most, now);
  }
  return most;
}

const submit = (name: string) =>
  `sleep 0.6; echo ${name} > src/${name}.txt; echo 'Add ${name}' | overseer-agent submit --message-file -`;

describe("worker pools", () => {
  it("routes a run to its pool's queue: a default worker leaves it, a worker of the pool runs it", async () => {
    const plain = await new WorkerRig().setup({ concurrency: 1 });
    rigs.push(plain);
    const job = plain.job(submit("jdk"), { pool: "jdk", taskId: "S01-001" });
    await plain.queues.enqueueRun(job);
    const jdkQueue = plain.queues.runQueue("jdk");
    expect(jdkQueue.name).toBe(runQueueName("jdk"));
    expect(await jdkQueue.getJobCountByTypes("waiting")).toBe(1);
    // A default-pool run on the same worker still runs while the jdk job waits.
    const other = await plain.run(plain.job(submit("plain"), { taskId: "S01-002" }));
    expect(other.outcome.kind).toBe("transition");
    expect(await jdkQueue.getJobCountByTypes("waiting")).toBe(1);
    expect(await plain.reportedResult(job.runId)).toBeNull();

    const jdk = await new WorkerRig(plain.prefix).setup({ concurrency: 1, pools: ["jdk"] });
    rigs.push(jdk);
    const result = await resultOf(plain, job.runId);
    expect(result.outcome.kind).toBe("transition");
    expect(result.workerId).toBe(jdk.worker.id);
    expect((await plain.queues.runJobState(job.runId, "jdk")).state).toBe("reported");
  });

  it("shares one slot budget across the pools it serves: never more runs at once than its concurrency", async () => {
    const rig = await new WorkerRig().setup({ concurrency: 2, pools: ["gpu", "jdk"] });
    rigs.push(rig);
    const jobs = [1, 2, 3, 4, 5, 6].map((n) =>
      rig.job(submit(`f${n}`), { pool: n % 2 === 0 ? "gpu" : "jdk", taskId: `S02-00${n}` }),
    );
    await Promise.all(jobs.map((job) => rig.queues.enqueueRun(job)));
    const results = await Promise.all(jobs.map((job) => resultOf(rig, job.runId)));
    expect(results.map((r) => r.outcome.kind)).toEqual(jobs.map(() => "transition"));
    // Each pool's consumer may take the whole budget, so without the shared gate 4 would run.
    expect(mostAtOnce(results)).toBe(2);
  });
});
