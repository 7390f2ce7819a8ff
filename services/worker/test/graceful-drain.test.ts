/**
 * Worker shutdown drains (worker-service.ts): on stop it takes no new job, lets running runs
 * finish within the drain time, then aborts the rest and hands their jobs straight back to the
 * queue — waiting again, no attempt spent, no result reported — so another worker runs them
 * at once. Real Redis (BullMQ), real bwrap sandboxes, real git.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { runJobId } from "@overseer/queue";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerRig } from "./support/worker-rig.ts";

const rigs: WorkerRig[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const rig of rigs.splice(0).reverse()) await rig.teardown();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
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

/** Resolves once the run's agent printed `line` (it is then running inside its sandbox). */
function agentPrinted(rig: WorkerRig, runId: string, line: string): Promise<boolean> {
  return until(`${runId} to print ${line}`, async () =>
    (await rig.live.readLog(runId)).some((entry) => entry.data.includes(line)),
  );
}

describe("worker drain on stop", () => {
  it("lets a running run finish and report, and takes no new job meanwhile", async () => {
    const rig = await new WorkerRig().setup({ concurrency: 2 });
    rigs.push(rig);
    // The agent waits on a file the test creates once the drain has begun.
    const gate = await mkdtemp(path.join(tmpdir(), "overseer-drain-gate-"));
    dirs.push(gate);
    const running = rig.job(
      `echo agent up; while [ ! -e ${gate}/go ]; do sleep 0.05; done; echo done > src/a.txt; echo 'Add a' | overseer-agent submit --message-file -`,
      { taskId: "S01-001", readOnlyPaths: [gate] },
    );
    await rig.queues.enqueueRun(running);
    await agentPrinted(rig, running.runId, "agent up");

    const stopped = rig.worker.stop(60_000);
    const late = rig.job("echo 'late' | overseer-agent submit --message-file -", { taskId: "S01-002" });
    await rig.queues.enqueueRun(late);
    await writeFile(path.join(gate, "go"), "");
    await stopped;

    const result = await rig.reportedResult(running.runId);
    expect(result).toMatchObject({ runId: running.runId, outcome: { kind: "transition" } });
    // The job enqueued during the drain was left for another worker.
    expect(await (await rig.queues.runs.getJob(runJobId(late.runId)))?.getState()).toBe("waiting");
    expect(await rig.reportedResult(late.runId)).toBeNull();
  });

  it("hands a run still going at the drain deadline straight back; another worker then finishes it once", async () => {
    const rig = await new WorkerRig().setup({ concurrency: 1 });
    rigs.push(rig);
    // First delivery: the agent runs until stopped. Once the test creates `go`, an agent submits.
    const gate = await mkdtemp(path.join(tmpdir(), "overseer-drain-gate-"));
    dirs.push(gate);
    await mkdir(gate, { recursive: true });
    const job = rig.job(
      `echo agent up; if [ -e ${gate}/go ]; then echo b > src/b.txt; echo 'Add b' | overseer-agent submit --message-file -; else sleep 300; fi`,
      { taskId: "S02-001", readOnlyPaths: [gate] },
    );
    await rig.queues.enqueueRun(job);
    await agentPrinted(rig, job.runId, "agent up");
    const before = await rig.queues.runs.getJob(runJobId(job.runId));
    expect(before?.attemptsMade).toBe(0);

    // The rig's job lock lasts 30 s: a job back in `waiting` right after stop was handed back,
    // not redelivered by a stalled-lock check.
    await rig.worker.stop(200);
    const handedBack = await rig.queues.runs.getJob(runJobId(job.runId));
    expect(await handedBack?.getState()).toBe("waiting");
    expect(handedBack?.attemptsMade).toBe(0);
    expect(await rig.reportedResult(job.runId)).toBeNull();

    await writeFile(path.join(gate, "go"), "");
    const next = await new WorkerRig(rig.prefix).setup();
    rigs.push(next);
    const result = await until("the redelivered run's result", async () => rig.reportedResult(job.runId));
    expect(result).toMatchObject({ runId: job.runId, outcome: { kind: "transition" } });
    expect(await rig.git("show", "overseer/task/S02-001:src/b.txt")).toBe("b");
  });
});
