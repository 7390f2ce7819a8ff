/**
 * A cancel reports what the run spent at once: the run is already cancelled in Postgres when the
 * worker hears of it, so its usage travels when the cancel arrives, not after the agent's
 * process group has had its kill grace and been drained (an agent that ignores SIGTERM, here,
 * holds the group for the whole grace). Reports are off while it runs (usageReportMs 0), so the
 * only report before the group ends is the one the cancel sends.
 */
import { type RunUsageMessage, runUsageMessageSchema } from "@overseer/run-contract";
import { afterAll, beforeAll, expect, it } from "vitest";
import { WorkerRig } from "./support/worker-rig.ts";

const rig = new WorkerRig();
// The grace only has to outlast cancel → usage report → the state check below, about 0.1 s on a
// loaded two-core machine; the test waits all of it out at the end.
beforeAll(() => rig.setup({ usageReportMs: 0, killGraceMs: 3_000 }));
afterAll(() => rig.teardown());

async function usageReports(runId: string): Promise<RunUsageMessage[]> {
  const messages = await rig.queues.results.messages();
  return messages
    .filter((m) => (m as { kind?: string }).kind === "run-usage")
    .map((m) => runUsageMessageSchema.parse(m))
    .filter((m) => m.runId === runId);
}

it("a cancelled run's usage is reported when the cancel arrives, while its agent still holds the kill grace", async () => {
  const turn = {
    type: "turn.completed",
    usage: { input_tokens: 4321, cached_input_tokens: 0, output_tokens: 9 },
  };
  const job = rig.job(`trap '' TERM; echo '${JSON.stringify(turn)}'; echo agent-waits; sleep 120`, {
    agent: "codex",
  });
  await rig.queues.enqueueRun(job);
  // The worker has the line (its run log follows the output the meter reads).
  await waitFor(async () =>
    (await rig.live.readLog(job.runId)).some((entry) => entry.data.includes("agent-waits")),
  );
  expect(await usageReports(job.runId)).toEqual([]);
  await rig.cancel(job);
  await waitFor(async () => (await usageReports(job.runId)).length > 0);
  // The agent ignores SIGTERM: its group is still inside the 3 s grace, the job still active.
  expect((await rig.queues.runJobState(job.runId)).state).toBe("active");
  expect((await usageReports(job.runId))[0]?.usage).toMatchObject({ tokensIn: 4321, tokensOut: 9 });
  // After the grace the group is killed and the job ends, with nothing reported twice.
  await waitFor(async () => (await rig.queues.runJobState(job.runId)).state !== "active");
  expect(await usageReports(job.runId)).toHaveLength(1);
}, 60_000);

async function waitFor(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
