/**
 * What a task's transitions cost the coordinator in Postgres statements, counted exactly as
 * Postgres counts them (transaction control included) on the coordinator's own connections:
 * every statement is a round trip on a run's critical path, and issue 22 bounds them per
 * transition. A change that adds one fails here, naming the statements.
 */
import { connectDatabase, createProject, type DbHandle, listRuns, type ScratchDatabase } from "@overseer/db";
import type { RunOutcome } from "@overseer/run-contract";
import { runResultFixture, taskCard } from "@overseer/test-support";
import { importTasks, startProject, type TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CoordinatorRig, openCoordinatorRig } from "./coordinator-rig.ts";

let rig: CoordinatorRig;
let scratch: ScratchDatabase;
let operator: TransitionApplier;
let recorded: DbHandle;
const statements: string[] = [];

beforeAll(async () => {
  rig = await openCoordinatorRig("stmtcost");
  ({ scratch, applier: operator } = rig);
  recorded = connectDatabase(scratch.url, { onStatement: (text) => statements.push(text) });
});
afterAll(async () => {
  await recorded?.close();
  await rig?.close();
});

function result(runId: string, projectId: string, transition: object) {
  const outcome = { kind: "transition", transition: { version: 1, ...transition }, usage: undefined };
  return runResultFixture({
    runId,
    projectId,
    outcome: outcome as RunOutcome,
    workerId: "worker-test",
    commitSha: "c0ffee",
    branchHead: "c0ffee",
    durationMs: 5,
    output: "done",
  });
}

async function queuedRun(projectId: string, action: string) {
  const runs = await listRuns(scratch.db, { projectId, limit: 10 });
  const run = runs.find((r) => r.action === action && r.status === "queued");
  if (!run) throw new Error(`no queued ${action} run in ${projectId}`);
  return run;
}

/** The statements `work` sent, one line each (whitespace folded, shortened). */
async function statementsOf(work: () => Promise<void>): Promise<string[]> {
  statements.length = 0;
  await work();
  return statements.map((s) => s.replace(/\s+/g, " ").trim().slice(0, 90));
}

describe("a task's transitions through the coordinator, in statements", () => {
  it("claim with its job, run start, submit, review claim, review start, approve", async () => {
    await createProject(scratch.db, { id: "cost", repo: "/tmp/none", runnerConfig: { argv: ["true"] } });
    await importTasks(operator, "cost", [taskCard("S00-001")]);
    await startProject(operator, "cost", { by: "test" });
    const c = rig.coordinator({}, rig.logger, recorded.db);
    // The lease, then the first pass: its claim stores the run's job and queues it.
    await c.renewLeases();
    await c.idle();
    const execute = await queuedRun("cost", "execute");
    const started = (runId: string) =>
      statementsOf(async () => {
        await c.applyResultMessage({
          v: 1,
          kind: "run-started",
          runId,
          projectId: "cost",
          workerId: "worker-test",
          at: Date.now(),
        });
        await c.idle();
      });
    const costs: Record<string, number> = {};
    costs.executeStarted = (await started(execute.id)).length;
    const submit = await statementsOf(async () => {
      await c.applyResultMessage(result(execute.id, "cost", { kind: "submit", message: "feat: it" }));
      await c.idle();
    });
    // The submit's transaction, then the pass it asks for: the review's claim and its job.
    costs.submitAndReviewClaim = submit.length;
    const review = await queuedRun("cost", "review");
    costs.reviewStarted = (await started(review.id)).length;
    const approve = await statementsOf(async () => {
      await c.applyResultMessage(result(review.id, "cost", { kind: "approve" }));
      await c.idle();
    });
    costs.approve = approve.length;
    expect({ costs, submit, approve }).toMatchObject({
      costs: { executeStarted: 5, submitAndReviewClaim: 14, reviewStarted: 5, approve: 6 },
    });
  });
});
