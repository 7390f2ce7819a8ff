/**
 * Service-level tests of the coordinator against real Postgres and Redis: a run result goes
 * in through `applyResultMessage` (the results queue's handler) or a scheduling pass, and
 * what Postgres holds afterwards is checked.
 */
import { randomBytes } from "node:crypto";
import { createLogger } from "@overseer/config";
import {
  createProject,
  createScratchDatabase,
  getRun,
  getTask,
  listEvents,
  requireProject,
  type ScratchDatabase,
} from "@overseer/db";
import {
  createRedis,
  LiveChannel,
  type Redis,
  RUN_JOB_VERSION,
  type RunOutcome,
  RunQueues,
  type RunResult,
} from "@overseer/queue";
import { importTasks, startProject, TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Coordinator } from "../src/coordinator.ts";

const prefix = `${process.env.OVERSEER_TEST_RUN ?? "local"}-coordtest-${randomBytes(4).toString("hex")}`;
const logger = createLogger({ name: "coordinator-test", level: "silent" });
let scratch: ScratchDatabase;
let redis: Redis;
let queues: RunQueues;
let live: LiveChannel;
let applier: TransitionApplier;
const coordinators: Coordinator[] = [];

const card = (id: string) => ({
  id,
  stage: "S00",
  title: `Task ${id}`,
  body: "",
  role: "general",
  scope: ["src/**"],
  prerequisites: [],
  acceptance: [],
  priority: 0,
});

function resultOf(runId: string, projectId: string, outcome: RunOutcome): RunResult {
  return {
    v: RUN_JOB_VERSION,
    kind: "run-result",
    runId,
    projectId,
    workerId: "worker-test",
    outcome,
    scopeViolations: [],
    commitSha: "c0ffee",
    branchHead: "c0ffee",
    landedSha: null,
    landedBranch: null,
    checkpointRef: null,
    exitCode: 0,
    signal: null,
    durationMs: 5,
    output: "done",
    outputTruncated: false,
    timing: { enqueuedAt: 1, pickedAt: 2, spawnedAt: 3, exitedAt: 4, reportedAt: 5 },
  };
}

/** A coordinator on the test database that owns no lease until `renewLeases` is called. */
function coordinator(): Coordinator {
  const created = new Coordinator(
    { db: scratch.db, notifications: scratch.notifications, workerConnection: redis, queues, live, logger },
    { id: `coord-${randomBytes(3).toString("hex")}`, prefix },
  );
  coordinators.push(created);
  return created;
}

/** An active project with one task, and the run a claim created for it. */
async function projectWithClaimedTask(projectId: string, budgetUsd: number | null = null) {
  await createProject(scratch.db, { id: projectId, repo: "/tmp/none", runnerConfig: {}, budgetUsd });
  await importTasks(applier, projectId, [card("S00-001")]);
  await startProject(applier, projectId, { by: "test" });
  const claimed = await applier.apply(projectId, { kind: "claim" });
  const run = claimed.changes.runs.find((r) => claimed.changes.createdRunIds.has(r.id));
  if (!run) throw new Error(`the claim created no run for ${projectId}`);
  return run;
}

beforeAll(async () => {
  scratch = await createScratchDatabase();
  redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  queues = new RunQueues(redis, { prefix });
  live = new LiveChannel(redis, { prefix });
  applier = new TransitionApplier({ db: scratch.db, live, queues });
});

afterAll(async () => {
  for (const c of coordinators) await c.stop();
  await queues?.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis?.disconnect();
  await scratch?.drop();
});

describe("Coordinator applying run results", () => {
  it("turns a landing conflict reported by the worker into a reject: the task goes back to its executor with the feedback", async () => {
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

    // What the worker's git phase reports when the approved work cannot land.
    const feedback =
      "The approved work could not land on main: merge conflict in src/a.ts. Integrate the current main and resolve the conflict.\nCONFLICT (content)";
    await c.applyResultMessage(
      resultOf(review.id, "conflict", {
        kind: "transition",
        transition: { version: 1, kind: "reject", feedback },
        usage: undefined,
      }),
    );

    const task = await getTask(scratch.db, "conflict", "S00-001");
    expect(task).toMatchObject({ status: "todo", feedback, failures: 0 });
    expect(await getRun(scratch.db, review.id)).toMatchObject({ status: "finished", transition: "reject" });
    const events = await listEvents(scratch.db, { projectId: "conflict" });
    expect(events.some((e) => e.type === "task.rejected")).toBe(true);
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
    expect(task).toMatchObject({ status: "todo", feedback: before?.feedback ?? null, failures: 1 });
    const types = (await listEvents(scratch.db, { projectId: "refused" })).map((e) => e.type);
    expect(types).not.toContain("task.rejected");
    expect(types).toContain("task.retry_scheduled");
    const project = await requireProject(scratch.db, "refused");
    expect(project.status).toBe("active");
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
    expect(project.status_reason).toContain("budget_usd 0.5 reached (spent 0.7500)");
    const events = await listEvents(scratch.db, { projectId: "budget", types: ["project.status_changed"] });
    expect(events.at(-1)?.data).toMatchObject({ status: "paused", reason: project.status_reason });
    // No reviewer was claimed once the budget was reached.
    expect((await getTask(scratch.db, "budget", "S00-001"))?.status).toBe("review");
  });
});
