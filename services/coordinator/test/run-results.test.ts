/**
 * Service-level tests of the coordinator against real Postgres and Redis: a run result goes
 * in through `applyResultMessage` (the results queue's handler) or a scheduling pass, and
 * what Postgres holds afterwards is checked.
 */
import {
  acquireLeases,
  createProject,
  type Db,
  getRun,
  getTask,
  leaseOwners,
  listEvents,
  releaseLeases,
  requireProject,
  type ScratchDatabase,
} from "@overseer/db";
import type { RunOutcome, RunResult } from "@overseer/run-contract";
import { createLogger } from "@overseer/runtime";
import { runResultFixture, taskCard } from "@overseer/test-support";
import { importTasks, startProject, type TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Coordinator } from "../src/coordinator.ts";
import { type CoordinatorRig, countingTransactions, openCoordinatorRig } from "./coordinator-rig.ts";

let rig: CoordinatorRig;
let scratch: ScratchDatabase;
let applier: TransitionApplier;
const logger = createLogger({ name: "coordinator-test", level: "silent" });

const card = (id: string) => taskCard(id);

function resultOf(runId: string, projectId: string, outcome: RunOutcome): RunResult {
  return runResultFixture({
    runId,
    projectId,
    outcome,
    workerId: "worker-test",
    commitSha: "c0ffee",
    branchHead: "c0ffee",
    durationMs: 5,
    output: "done",
  });
}

/** A coordinator on the test database that owns no lease until `renewLeases` is called. */
function coordinator(
  options: { maxPlanTasks?: number } = {},
  log = logger,
  db: Db = scratch.db,
): Coordinator {
  return rig.coordinator(options, log, db);
}

/** An active project with one task. */
async function startedProject(
  projectId: string,
  budgetUsd: number | null = null,
  runnerConfig: Record<string, unknown> = {},
): Promise<void> {
  await createProject(scratch.db, { id: projectId, repo: "/tmp/none", runnerConfig, budgetUsd });
  await importTasks(applier, projectId, [card("S00-001")]);
  await startProject(applier, projectId, { by: "test" });
}

/** An active project with one task, and the run a claim created for it. */
async function projectWithClaimedTask(
  projectId: string,
  budgetUsd: number | null = null,
  runnerConfig: Record<string, unknown> = {},
) {
  await startedProject(projectId, budgetUsd, runnerConfig);
  const claimed = await applier.apply(projectId, { kind: "claim" });
  const run = claimed.changes.runs.find((r) => claimed.changes.createdRunIds.has(r.id));
  if (!run) throw new Error(`the claim created no run for ${projectId}`);
  return run;
}

beforeAll(async () => {
  rig = await openCoordinatorRig("coordtest");
  ({ scratch, applier } = rig);
});

afterAll(async () => {
  await rig?.close();
});

describe("Coordinator applying run results", () => {
  it("records an approve that could not land as land-failed: the task goes back to an executor with the files, in Postgres", async () => {
    const c = coordinator();
    const execute = await projectWithClaimedTask("conflict");
    await c.applyResultMessage(
      resultOf(execute.id, "conflict", {
        kind: "transition",
        transition: { version: 1, kind: "submit", message: "feat: the work" },
        usage: undefined,
      }),
    );
    expect((await getTask(scratch.db, "conflict", "S00-001"))?.status).toBe("review");
    const claimed = await applier.apply("conflict", { kind: "claim" });
    const review = claimed.changes.runs.find((r) => claimed.changes.createdRunIds.has(r.id));
    expect(review?.action).toBe("review");
    if (!review) return;

    // What the worker reports when the approved work cannot land: the approve, and why not.
    await c.applyResultMessage({
      ...resultOf(review.id, "conflict", {
        kind: "transition",
        transition: { version: 1, kind: "approve" },
        usage: undefined,
      }),
      landingFailure: {
        reason: "conflict",
        files: ["src/a.ts"],
        details: "CONFLICT (content): Merge conflict in src/a.ts",
      },
    });

    const task = await getTask(scratch.db, "conflict", "S00-001");
    expect(task).toMatchObject({
      status: "todo",
      failures: 0,
      landing: { reason: "conflict", files: ["src/a.ts"] },
    });
    expect(task?.feedback).toMatch(/could not land on main: it conflicts with main in src\/a\.ts/);
    expect(await getRun(scratch.db, review.id)).toMatchObject({ status: "finished", transition: "approve" });
    const events = await listEvents(scratch.db, { projectId: "conflict" });
    expect(events.find((e) => e.type === "task.landing_failed")?.data).toMatchObject({
      reason: "conflict",
      files: ["src/a.ts"],
    });
    expect(events.some((e) => e.type === "task.approved" || e.type === "task.rejected")).toBe(false);
    const again = await applier.apply("conflict", { kind: "claim" });
    const next = again.changes.runs.find((r) => again.changes.createdRunIds.has(r.id));
    expect(next).toMatchObject({ taskId: "S00-001", action: "execute" });
  });

  it("fails the run when the domain refuses the result's transition, and changes nothing else", async () => {
    const c = coordinator();
    const execute = await projectWithClaimedTask("refused");
    const before = await getTask(scratch.db, "refused", "S00-001");
    // An execute run may not reject: the state machine refuses it.
    await c.applyResultMessage(
      resultOf(execute.id, "refused", {
        kind: "transition",
        transition: { version: 1, kind: "reject", feedback: "not mine to reject" },
        usage: undefined,
      }),
    );

    const run = await getRun(scratch.db, execute.id);
    expect(run?.status).toBe("failed");
    expect(run?.transition).toBeNull();
    expect(run?.failure).toContain("invalid transition");
    const task = await getTask(scratch.db, "refused", "S00-001");
    expect(task).toMatchObject({ status: "todo", failures: 1 });
    // The refused reject's words never become the task's feedback; the next run is told why
    // this one failed.
    expect(before?.feedback ?? null).toBeNull();
    expect(task?.feedback).not.toContain("not mine to reject");
    expect(task?.feedback).toMatch(
      /^The previous run \(\S+\) ended without a transition: invalid transition/,
    );
    const types = (await listEvents(scratch.db, { projectId: "refused" })).map((e) => e.type);
    expect(types).not.toContain("task.rejected");
    expect(types).toContain("task.retry_scheduled");
    const project = await requireProject(scratch.db, "refused");
    expect(project.status).toBe("active");
  });
});

describe("one result, one command, one transaction", () => {
  it("applies a refused result as the failed run in one transaction, counting what the run spent", async () => {
    const counting = countingTransactions(scratch.db);
    const c = coordinator({}, logger, counting.db);
    const execute = await projectWithClaimedTask("refused-once", null, {
      attempts: 3,
      retry_backoff_seconds: 7,
    });
    const eventsBefore = (await listEvents(scratch.db, { projectId: "refused-once" })).length;
    await c.applyResultMessage({
      ...resultOf(execute.id, "refused-once", {
        kind: "transition",
        transition: { version: 1, kind: "approve", feedback: "an executor approving its own work" },
        usage: undefined,
      }),
      usage: { tokensIn: 1500, tokensOut: 250, costUsd: 0.03 },
    });

    expect(counting.count()).toBe(1);
    const run = await getRun(scratch.db, execute.id);
    expect(run).toMatchObject({ status: "failed", transition: null });
    expect(run?.failure).toContain("invalid transition");
    // The refused outcome's usage is recorded with the failed run, in the same transaction.
    expect(Number(run?.tokens_in)).toBe(1500);
    expect(Number(run?.tokens_out)).toBe(250);
    const task = await getTask(scratch.db, "refused-once", "S00-001");
    expect(task).toMatchObject({ status: "todo", failures: 1 });
    // The project's retry policy (retry_backoff_seconds 7) decided the backoff.
    const events = (await listEvents(scratch.db, { projectId: "refused-once" })).slice(eventsBefore);
    expect(events.map((e) => e.type)).toEqual(["run.failed", "task.retry_scheduled"]);
    expect(events[1]?.data).toMatchObject({ attempt: 2, maxAttempts: 3, delayMs: 7000 });
  });

  it("applies an accepted result in one transaction too", async () => {
    const counting = countingTransactions(scratch.db);
    const c = coordinator({}, logger, counting.db);
    const execute = await projectWithClaimedTask("accepted-once");
    await c.applyResultMessage(
      resultOf(execute.id, "accepted-once", {
        kind: "transition",
        transition: { version: 1, kind: "submit", message: "feat: the work" },
        usage: undefined,
      }),
    );
    expect(counting.count()).toBe(1);
    expect((await getTask(scratch.db, "accepted-once", "S00-001"))?.status).toBe("review");
  });
});

describe("a planner's plan through the coordinator (issue 19, breach 6)", () => {
  /** A mission project whose planning task MISSION-R1 is claimed; answers the planning run. */
  async function claimedPlanningRun(projectId: string) {
    await createProject(scratch.db, { id: projectId, repo: "/tmp/none", runnerConfig: {} });
    await applier.apply(projectId, {
      kind: "start-mission",
      objective: "Build the parser",
      stage: null,
      sessionsLimit: null,
      maxRounds: 3,
      by: "test",
    });
    const claimed = await applier.apply(projectId, { kind: "claim" });
    const run = claimed.changes.runs.find((r) => claimed.changes.createdRunIds.has(r.id));
    if (!run) throw new Error(`the claim created no run for ${projectId}`);
    return run;
  }
  const planOf = (count: number) =>
    [
      "tasks:",
      ...Array.from(
        { length: count },
        (_, i) => `  - id: S01-${String(i + 1).padStart(3, "0")}\n    title: Step ${i + 1}`,
      ),
    ].join("\n");
  const planned = (runId: string, projectId: string, count: number) =>
    resultOf(runId, projectId, {
      kind: "transition",
      transition: { version: 1, kind: "plan", plan: planOf(count) },
      usage: undefined,
    });

  it("refuses a plan over the import bound back to its planner, importing nothing", async () => {
    const run = await claimedPlanningRun("bigplan");
    await coordinator({ maxPlanTasks: 3 }).applyResultMessage(planned(run.id, "bigplan", 4));
    const task = await getTask(scratch.db, "bigplan", "MISSION-R1");
    expect(task?.status).toBe("todo");
    expect(task?.feedback).toContain("expected at most 3 tasks in one file, received 4");
    expect(await getTask(scratch.db, "bigplan", "S01-001")).toBeFalsy();
    const types = (await listEvents(scratch.db, { projectId: "bigplan" })).map((e) => e.type);
    expect(types).toContain("mission.plan_invalid");
  });

  it("accepts a plan within the bound for review", async () => {
    const run = await claimedPlanningRun("smallplan");
    await coordinator({ maxPlanTasks: 3 }).applyResultMessage(planned(run.id, "smallplan", 3));
    expect((await getTask(scratch.db, "smallplan", "MISSION-R1"))?.status).toBe("review");
  });
});

describe("Coordinator scheduling pass", () => {
  it("pauses a project whose spending reached budget_usd, with the reason", async () => {
    const c = coordinator();
    const execute = await projectWithClaimedTask("budget", 0.5);
    // The run's reported cost brings the project to its budget.
    await c.applyResultMessage(
      resultOf(execute.id, "budget", {
        kind: "transition",
        transition: { version: 1, kind: "submit", message: "feat: costly" },
        usage: { costUsd: 0.75 },
      }),
    );
    expect((await requireProject(scratch.db, "budget")).cost_usd).toBeGreaterThanOrEqual(0.5);

    await c.renewLeases();
    await expect
      .poll(async () => (await requireProject(scratch.db, "budget")).status, { timeout: 30_000 })
      .toBe("paused");
    await c.idle();
    const project = await requireProject(scratch.db, "budget");
    expect(project.status).toBe("paused");
    expect(project.status_reason).toContain("budget_usd 0.5 reached (spent $0.7500)");
    const events = await listEvents(scratch.db, { projectId: "budget", types: ["project.status_changed"] });
    expect(events.at(-1)?.data).toMatchObject({ status: "paused", reason: project.status_reason });
    // No reviewer was claimed once the budget was reached.
    expect((await getTask(scratch.db, "budget", "S00-001"))?.status).toBe("review");
  });
});

describe("Coordinator counting what failed runs spent", () => {
  it("counts a run that ended without a transition once (cached tokens and source kept), and the budget pauses on it", async () => {
    const c = coordinator();
    const execute = await projectWithClaimedTask("spent-failing", 0.2);
    const failed: RunResult = {
      ...resultOf(execute.id, "spent-failing", {
        kind: "no-transition",
        crashed: false,
        detail: "exit 1 without calling overseer-agent",
      }),
      usage: {
        tokensIn: 30_000,
        tokensOut: 1_200,
        tokensCached: 20_000,
        costUsd: 0.25,
        source: "codex --json turn.completed",
      },
    };
    await c.applyResultMessage(failed);
    // The same result delivered again counts nothing more.
    await c.applyResultMessage(failed);
    const run = await getRun(scratch.db, execute.id);
    expect(run).toMatchObject({
      status: "failed",
      tokens_in: "30000",
      tokens_out: "1200",
      tokens_cached: "20000",
      usage_source: "codex --json turn.completed",
    });
    const project = await requireProject(scratch.db, "spent-failing");
    expect(project).toMatchObject({ tokens_in: "30000", tokens_cached: "20000" });
    expect(project.cost_usd).toBeCloseTo(0.25, 9);

    // The retry is never claimed: the failed run's spend reached the budget.
    await c.renewLeases();
    await expect
      .poll(async () => (await requireProject(scratch.db, "spent-failing")).status, { timeout: 30_000 })
      .toBe("paused");
    await c.idle();
    expect((await requireProject(scratch.db, "spent-failing")).status_reason).toContain(
      "budget_usd 0.2 reached",
    );
  });

  it("counts a timed-out run, and a result that arrives after its task was cancelled", async () => {
    const c = coordinator();
    const execute = await projectWithClaimedTask("spent-timeout");
    await c.applyResultMessage({
      ...resultOf(execute.id, "spent-timeout", { kind: "timeout", stalled: false, seconds: 60 }),
      usage: { tokensIn: 1000, tokensOut: 10, costUsd: 0.01, source: "claude stream-json result" },
    });
    expect(await getRun(scratch.db, execute.id)).toMatchObject({
      status: "failed",
      tokens_in: "1000",
      usage_source: "claude stream-json result",
    });

    const cancelledRun = await projectWithClaimedTask("spent-cancelled");
    await applier.apply("spent-cancelled", { kind: "cancel", taskId: "S00-001", by: "test" });
    expect((await getRun(scratch.db, cancelledRun.id))?.status).toBe("cancelled");
    await c.applyResultMessage({
      ...resultOf(cancelledRun.id, "spent-cancelled", {
        kind: "transition",
        transition: { version: 1, kind: "submit", message: "too late" },
      }),
      usage: { tokensIn: 500, tokensOut: 5, costUsd: 0.005, source: "overseer-agent" },
    });
    expect(await getRun(scratch.db, cancelledRun.id)).toMatchObject({
      status: "cancelled",
      tokens_in: "500",
      usage_source: "overseer-agent",
    });
    expect((await requireProject(scratch.db, "spent-cancelled")).tokens_in).toBe("500");
  });
  it("usage reports of a running run only ever raise its spend, whatever their order, and the result adds nothing twice", async () => {
    const c = coordinator();
    const run = await projectWithClaimedTask("spent-reports");
    const report = (seq: number, tokensIn: number, costUsd?: number) =>
      c.applyResultMessage({
        v: 1,
        kind: "run-usage",
        runId: run.id,
        projectId: "spent-reports",
        workerId: "w1",
        seq,
        usage: {
          tokensIn,
          tokensOut: tokensIn / 10,
          ...(costUsd === undefined ? {} : { costUsd }),
          source: "s",
        },
      });
    await report(1, 100, 0.1);
    await report(3, 300, 0.3);
    await report(2, 200, 0.2); // late, smaller: lowers nothing
    await report(3, 300, 0.3); // redelivered: counts once
    await report(4, 0, 0); // a forged zero: lowers nothing
    await c.applyResultMessage({
      ...resultOf(run.id, "spent-reports", { kind: "timeout", stalled: true, seconds: 45 }),
      usage: { tokensIn: 250, tokensOut: 25, costUsd: 0.25, source: "s" },
    });
    expect(await getRun(scratch.db, run.id)).toMatchObject({
      tokens_in: "300",
      tokens_out: "30",
      cost_usd: 0.3,
    });
    const project = await requireProject(scratch.db, "spent-reports");
    expect(project).toMatchObject({
      tokens_in: "300",
      tokens_out: "30",
      cost_usd: 0.3,
      tokens_unpriced: "0",
    });
  });

  it("usage nothing prices is counted as unpriced tokens, not as $0 of spend", async () => {
    const c = coordinator();
    const run = await projectWithClaimedTask("spent-unpriced");
    await c.applyResultMessage({
      v: 1,
      kind: "run-usage",
      runId: run.id,
      projectId: "spent-unpriced",
      workerId: "w1",
      seq: 1,
      usage: { tokensIn: 1234, tokensOut: 7, source: "claude stream-json assistant messages" },
    });
    expect(await getRun(scratch.db, run.id)).toMatchObject({
      tokens_in: "1234",
      tokens_unpriced: "1241",
      cost_usd: 0,
    });
    expect((await requireProject(scratch.db, "spent-unpriced")).tokens_unpriced).toBe("1241");
  });
  it("pauses a project at budget_tokens on usage no price covers (budget_usd cannot see it)", async () => {
    const c = coordinator();
    const run = await projectWithClaimedTask("spent-tokens", 1, { budget_tokens: 1000 });
    await c.applyResultMessage({
      v: 1,
      kind: "run-usage",
      runId: run.id,
      projectId: "spent-tokens",
      workerId: "w1",
      seq: 1,
      usage: { tokensIn: 990, tokensOut: 20, source: "codex --json turn.completed" },
    });
    await c.applyResultMessage({
      ...resultOf(run.id, "spent-tokens", { kind: "timeout", stalled: true, seconds: 45 }),
      usage: { tokensIn: 900, tokensOut: 10, source: "codex --json turn.completed" },
    });
    await c.renewLeases();
    await expect
      .poll(async () => (await requireProject(scratch.db, "spent-tokens")).status, { timeout: 30_000 })
      .toBe("paused");
    await c.idle();
    expect((await requireProject(scratch.db, "spent-tokens")).status_reason).toBe(
      "budget_tokens 1000 reached (1010 tokens used)",
    );
  });
});

/** A logger whose lines (level, msg) are kept for the test to read. */
function recordingLogger(): {
  logger: typeof logger;
  lines: { level: number; msg: string; projectId?: string }[];
} {
  const lines: { level: number; msg: string; projectId?: string }[] = [];
  const log = createLogger({
    name: "coordinator-test",
    level: "info",
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  return { logger: log, lines };
}

describe("Coordinator leases", () => {
  it("releases the lease of a project that paused, without a warning; a later start is leased again", async () => {
    const { logger: log, lines } = recordingLogger();
    const c = coordinator({}, log);
    await startedProject("lease-paused", null, { argv: ["true"] });
    await c.renewLeases();
    expect(c.ownedProjects).toContain("lease-paused");
    await c.idle();

    await applier.apply("lease-paused", { kind: "set-project-status", status: "paused", by: "test" });
    await c.renewLeases();
    expect(c.ownedProjects).not.toContain("lease-paused");
    // What `overseer up` echoes (warn and above): nothing.
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    expect(lines.map((l) => l.msg)).toContain("lease released: project lease-paused is paused");
    expect((await leaseOwners(scratch.db)).map((l) => l.projectId)).not.toContain("lease-paused");

    await startProject(applier, "lease-paused", { by: "test" });
    await c.renewLeases();
    expect(c.ownedProjects).toContain("lease-paused");
    await c.idle();
  });

  it("warns, naming the project and its new holder, when another replica took an expired lease", async () => {
    const { logger: log, lines } = recordingLogger();
    const c = coordinator({}, log);
    await startedProject("lease-taken", null, { argv: ["true"] });
    await c.renewLeases();
    expect(c.ownedProjects).toContain("lease-taken");
    await c.idle();
    // This replica stalled past its lease, which another one took.
    await releaseLeases(scratch.db, c.id, ["lease-taken"]);
    expect(await acquireLeases(scratch.db, "coord-other", 60_000)).toContain("lease-taken");

    await c.renewLeases();
    expect(c.ownedProjects).not.toContain("lease-taken");
    const warnings = lines.filter((l) => l.level >= 40);
    expect(warnings.map((l) => l.msg)).toEqual([
      "lease lost: project lease-taken is now leased by coord-other; this replica stops scheduling it",
    ]);
    await c.idle();
  });

  it("a claim that found its own lease lapsed (Postgres away past the TTL) runs again once a renewal extends it", async () => {
    const c = coordinator();
    await startedProject("lease-lapsed", null, { argv: ["true"] });
    const runsOf = (action: string) =>
      scratch.db
        .selectFrom("runs")
        .select("id")
        .where("project_id", "=", "lease-lapsed")
        .where("action", "=", action)
        .execute();
    await c.renewLeases();
    await c.idle();
    const [execute] = await runsOf("execute");
    if (!execute) throw new Error("the first pass claimed nothing");
    await scratch.db
      .updateTable("leases")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("project_id", "=", "lease-lapsed")
      .execute();
    await c.applyResultMessage(
      resultOf(execute.id, "lease-lapsed", {
        kind: "transition",
        transition: { version: 1, kind: "submit", message: "feat: the work" },
      }),
    );
    await c.idle();
    // The submit's pass found the lease lapsed: it claimed nothing, and the project stays owned.
    expect(await runsOf("review")).toEqual([]);
    expect(c.ownedProjects).toContain("lease-lapsed");

    await c.renewLeases();
    await c.idle();
    expect(await runsOf("review")).toHaveLength(1);
  });
});
