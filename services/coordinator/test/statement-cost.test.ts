/**
 * What a task's transitions cost the coordinator in Postgres statements, counted exactly as
 * Postgres counts them (transaction control included) on the coordinator's own connections:
 * every statement is a round trip on a run's critical path, and issue 22 bounds them per
 * transition. A change that adds one fails here, naming the statements.
 */
import {
  connectDatabase,
  createProject,
  type DbHandle,
  getRun,
  getRunJob,
  listRuns,
  requireProject,
  type ScratchDatabase,
  sql,
} from "@overseer/db";
import { taskCard } from "@overseer/test-support";
import { importTasks, startProject, type TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CoordinatorRig, openCoordinatorRig, transitionResult as result } from "./coordinator-rig.ts";

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
    // A start and a result: begin, the state's load, the events with the task and run updates
    // riding on them (riding-writes.ts), commit.
    expect({ costs, submit, approve }).toMatchObject({
      costs: { executeStarted: 4, submitAndReviewClaim: 9, reviewStarted: 4, approve: 4 },
    });
    expect([...submit, ...approve].filter((s) => /^update "(tasks|runs)"/.test(s))).toEqual([]);
  });
});

describe("a claim stores its runs' jobs in its own transaction", () => {
  it("the job and the run's prompt and pool are written before the claim's commit, nothing after it", async () => {
    await createProject(scratch.db, {
      id: "jobs-in-claim",
      repo: "/tmp/none",
      concurrency: 2,
      runnerConfig: { argv: ["true"], pool: "small" },
    });
    await importTasks(operator, "jobs-in-claim", [taskCard("S00-001"), taskCard("S00-002")]);
    await startProject(operator, "jobs-in-claim", { by: "test" });
    const c = rig.coordinator({}, rig.logger, recorded.db);
    const pass = await statementsOf(async () => {
      await c.renewLeases();
      await c.idle();
    });
    const runs = (await listRuns(scratch.db, { projectId: "jobs-in-claim", limit: 10 })).filter(
      (r) => r.status === "queued",
    );
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      const stored = await getRun(scratch.db, run.id);
      expect(stored).toMatchObject({ pool: "small", prompt: expect.stringContaining("S00-") });
      // The prompt is kept once, on the run's row; the job comes back with it.
      expect(await getRunJob(scratch.db, run.id)).toMatchObject({
        runId: run.id,
        pool: "small",
        prompt: stored?.prompt,
      });
      const row = await sql<{ job: object }>`SELECT job FROM run_jobs WHERE run_id = ${run.id}`.execute(
        scratch.db,
      );
      expect(row.rows[0]?.job).not.toHaveProperty("prompt");
    }
    // Both jobs ride on the claim's events statement; the claim's commit is the pass's last statement.
    expect(pass.at(-1)).toBe("commit");
    expect(pass.filter((s) => s.includes('"run_jobs"'))).toHaveLength(1);
    // Begin, the state's load, the project row's update (a run counts a session) with the new
    // runs and the tasks' updates riding on it, the events with the jobs, commit.
    const claim = pass.slice(pass.indexOf("start transaction isolation level repeatable read"));
    expect(claim).toHaveLength(5);
    expect(claim.filter((s) => s.startsWith('insert into "runs"'))).toEqual([]);
    expect(claim.filter((s) => s.startsWith('update "projects"'))).toEqual([]);
  });

  it("a run whose job cannot be built (no harness command) stores none and is failed as misconfigured", async () => {
    await createProject(scratch.db, { id: "no-harness", repo: "/tmp/none", runnerConfig: {} });
    await importTasks(operator, "no-harness", [taskCard("S00-001")]);
    await startProject(operator, "no-harness", { by: "test" });
    const c = rig.coordinator({}, rig.logger, recorded.db);
    await c.renewLeases();
    await c.idle();
    const [run] = await listRuns(scratch.db, { projectId: "no-harness", limit: 10 });
    expect(run).toMatchObject({ status: "failed" });
    expect(await getRunJob(scratch.db, run?.id ?? "")).toBeNull();
    expect(await requireProject(scratch.db, "no-harness")).toMatchObject({
      status: "paused",
      status_reason: expect.stringMatching(/harness/i),
    });
  });
});
