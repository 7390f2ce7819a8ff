/**
 * The coordinator leaves out a scheduling pass whose claim could change nothing, and reads a
 * project's row once, against real Postgres and Redis: the pass is left out after its own
 * result when nothing is runnable (no transaction, no read), and still runs on what another
 * writer changed (an operator's import, another replica's result, a config change: each a
 * NOTIFY) and when a retry backoff ends.
 */
import {
  createProject,
  type Db,
  getRun,
  getRunJob,
  getTask,
  listRuns,
  requireProject,
  type ScratchDatabase,
} from "@overseer/db";
import { taskCard } from "@overseer/test-support";
import {
  importTasks,
  startProject,
  type TransitionApplier,
  updateProjectConfig,
} from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Coordinator } from "../src/coordinator.ts";
import {
  type CoordinatorRig,
  countingTransactions,
  openCoordinatorRig,
  transitionResult as result,
} from "./coordinator-rig.ts";

let rig: CoordinatorRig;
let scratch: ScratchDatabase;
/** An operator's applier (the gateway's, the CLI's): its commits NOTIFY without an origin. */
let operator: TransitionApplier;

function coordinator(db: Db = scratch.db): Coordinator {
  return rig.coordinator({}, rig.logger, db);
}

const RUNNER = { argv: ["true"], attempts: 3, retry_backoff_seconds: 1 };

/** A started project with these tasks. */
async function started(
  projectId: string,
  taskIds: string[],
  runnerConfig: object = RUNNER,
  budgetUsd: number | null = null,
): Promise<void> {
  await createProject(scratch.db, {
    id: projectId,
    repo: "/tmp/none",
    runnerConfig: { ...runnerConfig },
    budgetUsd,
  });
  await importTasks(
    operator,
    projectId,
    taskIds.map((id) => taskCard(id)),
  );
  await startProject(operator, projectId, { by: "test" });
}

type ListedRun = Awaited<ReturnType<typeof listRuns>>[number];

async function runs(projectId: string): Promise<ListedRun[]> {
  return listRuns(scratch.db, { projectId, limit: 100 });
}

/** Waits for the queued run of this task and action (a pass claimed it). */
async function queuedRun(projectId: string, taskId: string, action: string): Promise<ListedRun> {
  let found: ListedRun | undefined;
  await expect
    .poll(
      async () => {
        found = (await runs(projectId)).find(
          (r) => r.task_id === taskId && r.action === action && r.status === "queued",
        );
        return found !== undefined;
      },
      { timeout: 10_000 },
    )
    .toBe(true);
  return found as ListedRun;
}

/** Submits the task's execute run and approves its review run through `c`; returns both runs. */
async function finishTask(c: Coordinator, projectId: string, taskId: string): Promise<void> {
  const execute = await queuedRun(projectId, taskId, "execute");
  await c.applyResultMessage(result(execute.id, projectId, { kind: "submit", message: "feat: it" }));
  const review = await queuedRun(projectId, taskId, "review");
  await c.applyResultMessage(result(review.id, projectId, { kind: "approve" }));
}

beforeAll(async () => {
  rig = await openCoordinatorRig("gatetest");
  ({ scratch, applier: operator } = rig);
});

afterAll(async () => {
  await rig?.close();
});

describe("passes whose claim could change nothing", () => {
  it("are left out after its own result leaves nothing runnable; an operator's import after it is still scheduled", async () => {
    const counting = countingTransactions(scratch.db);
    const c = coordinator(counting.db);
    await started("quiet", ["S00-001"]);
    await c.start();
    const execute = await queuedRun("quiet", "S00-001", "execute");
    await c.applyResultMessage(result(execute.id, "quiet", { kind: "submit", message: "feat: it" }));
    const review = await queuedRun("quiet", "S00-001", "review");
    await c.idle();
    expect(c.gate.skippedPasses).toBe(0);

    // The approve's transaction and nothing after it: no claim, no read of the project.
    const transactions = counting.count();
    await c.applyResultMessage(result(review.id, "quiet", { kind: "approve" }));
    await c.idle();
    expect((await getTask(scratch.db, "quiet", "S00-001"))?.status).toBe("done");
    expect(counting.count() - transactions).toBe(1);
    expect(c.gate.skippedPasses).toBe(1);
    // The project's row was read once, by the first pass after the lease was won.
    expect(c.rows.readCount).toBe(1);

    // An operator's import: its NOTIFY asks for a pass, which claims the new task.
    await importTasks(operator, "quiet", [taskCard("S00-002")]);
    await queuedRun("quiet", "S00-002", "execute");
  });

  it("still run on a result another replica applied (its NOTIFY)", async () => {
    const holder = coordinator();
    const other = coordinator();
    await started("replicas", ["S00-001"]);
    await holder.start();
    expect(holder.ownedProjects).toContain("replicas");
    const execute = await queuedRun("replicas", "S00-001", "execute");
    // Results may be applied by any replica: the holder hears of it by NOTIFY and claims the review.
    await other.applyResultMessage(result(execute.id, "replicas", { kind: "submit", message: "feat: it" }));
    const review = await queuedRun("replicas", "S00-001", "review");
    expect(review.action).toBe("review");
  });

  it("arm the retry backoff's wake timer: the failed task's next attempt is claimed when it ends", async () => {
    const c = coordinator();
    // A backoff long enough that a loaded machine's apply does not outlast it.
    await started("backoff", ["S00-001"], { ...RUNNER, retry_backoff_seconds: 3 });
    await c.start();
    const first = await queuedRun("backoff", "S00-001", "execute");
    // An executor may not reject: the run fails, and the task waits out a 3 s backoff.
    const skipped = c.gate.skippedPasses;
    await c.applyResultMessage(result(first.id, "backoff", { kind: "reject", feedback: "no" }));
    expect(c.gate.skippedPasses).toBe(skipped + 1);
    expect((await getTask(scratch.db, "backoff", "S00-001"))?.status).toBe("todo");
    const second = await queuedRun("backoff", "S00-001", "execute");
    expect(second.id).not.toBe(first.id);
    expect(second.attempt).toBe(2);
  });

  it("read the project's row again after an operator changed it: the next job carries the new config", async () => {
    const c = coordinator();
    await started("reconfigured", ["S00-001"], { ...RUNNER, env: { STAGE: "one" } });
    await c.start();
    const first = await queuedRun("reconfigured", "S00-001", "execute");
    await expect.poll(() => getRunJob(scratch.db, first.id)).toMatchObject({ env: { STAGE: "one" } });
    const reads = c.rows.readCount;
    await updateProjectConfig(operator, "reconfigured", {
      runnerConfig: { ...RUNNER, env: { STAGE: "two" } },
    });
    await importTasks(operator, "reconfigured", [taskCard("S00-002")]);
    await finishTask(c, "reconfigured", "S00-001");
    const next = await queuedRun("reconfigured", "S00-002", "execute");
    // The job is stored just after the claim's commit that queued the run.
    await expect.poll(() => getRunJob(scratch.db, next.id)).toMatchObject({ env: { STAGE: "two" } });
    expect(c.rows.readCount).toBeGreaterThan(reads);
  });
});

describe("a result that brings only usage (its run had already ended)", () => {
  it("checks the budget: the project pauses at once, though its commit is the coordinator's own", async () => {
    const c = coordinator();
    await started("late-usage", ["S00-001"], RUNNER, 0.5);
    await c.start();
    const execute = await queuedRun("late-usage", "S00-001", "execute");
    // An operator cancels the task while its run goes; the run's result arrives afterwards.
    await operator.apply("late-usage", { kind: "cancel", taskId: "S00-001", by: "test" });
    await c.idle();
    await c.applyResultMessage({
      ...result(execute.id, "late-usage", { kind: "submit", message: "feat: too late" }),
      usage: { tokensIn: 500, tokensOut: 5, costUsd: 0.75, source: "overseer-agent" },
    });
    // Only the usage was recorded (already_applied), with this coordinator's NOTIFY, which it
    // skips: the coordinator itself asks for the pass whose budget check pauses the project.
    await expect
      .poll(async () => (await requireProject(scratch.db, "late-usage")).status, { timeout: 10_000 })
      .toBe("paused");
    await c.idle();
    const project = await requireProject(scratch.db, "late-usage");
    expect(project.cost_usd).toBeCloseTo(0.75, 9);
    expect(project.status_reason).toContain("budget_usd 0.5 reached");
    expect((await getRun(scratch.db, execute.id))?.status).toBe("cancelled");
  });
});

describe("a result delivered again after its run ended", () => {
  it("asks for no pass: the spend it brings was recorded by the first delivery", async () => {
    const counting = countingTransactions(scratch.db);
    const c = coordinator(counting.db);
    await started("repeated-usage", ["S00-001"], RUNNER, 0.5);
    await c.start();
    const execute = await queuedRun("repeated-usage", "S00-001", "execute");
    await operator.apply("repeated-usage", { kind: "cancel", taskId: "S00-001", by: "test" });
    await c.idle();
    const late = {
      ...result(execute.id, "repeated-usage", { kind: "submit", message: "feat: too late" }),
      usage: { tokensIn: 500, tokensOut: 5, costUsd: 0.75, source: "overseer-agent" },
    };
    // The first delivery records the spend and its pass pauses the project (acfff69).
    await c.applyResultMessage(late);
    await expect
      .poll(async () => (await requireProject(scratch.db, "repeated-usage")).status, { timeout: 10_000 })
      .toBe("paused");
    await c.idle();
    const transactions = counting.count();
    const reads = c.rows.readCount;
    // Delivered again (the results stream retries what it cannot tell was applied): the one
    // transaction that finds it applied and the spend unchanged, then nothing.
    await c.applyResultMessage(late);
    await c.applyResultMessage(late);
    await c.idle();
    expect(counting.count() - transactions).toBe(2);
    expect(c.rows.readCount).toBe(reads);
    expect((await requireProject(scratch.db, "repeated-usage")).cost_usd).toBeCloseTo(0.75, 9);
  });
});
