import { taskCard } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  acquireLeases,
  applyTransition,
  ConflictError,
  connectDatabase,
  createProject,
  createScratchDatabase,
  getRun,
  getTask,
  holdLease,
  LATEST_MIGRATION,
  LeaseLostError,
  listEvents,
  loadProjectState,
  migrateDown,
  migrateToLatest,
  pendingMigrations,
  releaseLeases,
  type ScratchDatabase,
  sql,
} from "../src/index.ts";

let scratch: ScratchDatabase;

const card = taskCard;

beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

async function projectWithTasks(id: string, cards = [card("S00-001"), card("S00-002", ["S00-001"])]) {
  await createProject(scratch.db, { id, repo: "/tmp/none", runnerConfig: {} });
  await applyTransition(scratch.db, id, { kind: "import-tasks", tasks: cards, by: "test" });
  await applyTransition(scratch.db, id, {
    kind: "start-project",
    by: "test",
    stage: null,
    sessionsLimit: null,
  });
}

describe("commands that used to bypass the state machine", () => {
  it("run-started records the worker, the start time and its event; a redelivery changes nothing", async () => {
    await projectWithTasks("started");
    const claimed = await applyTransition(scratch.db, "started", { kind: "claim" });
    const run = claimed.changes.runs[0]!;
    const at = Date.parse("2026-01-02T03:04:05.000Z");
    const started = await applyTransition(
      scratch.db,
      "started",
      { kind: "run-started", runId: run.id, workerId: "w7" },
      { ctx: { now: at } },
    );
    expect(started.eventRows.map((e) => e.type)).toEqual(["run.started"]);
    const row = await getRun(scratch.db, run.id);
    expect(row?.status).toBe("running");
    expect(row?.worker_id).toBe("w7");
    expect(row?.started_at?.toISOString()).toBe("2026-01-02T03:04:05.000Z");
    const again = await applyTransition(
      scratch.db,
      "started",
      { kind: "run-started", runId: run.id, workerId: "w7" },
      { ctx: { now: at + 1000 } },
    );
    expect(again.outcome).toBe("already_applied");
    expect((await getRun(scratch.db, run.id))?.started_at?.toISOString()).toBe("2026-01-02T03:04:05.000Z");
  });

  it("start-project records project.started with the stage and the session budget", async () => {
    await createProject(scratch.db, { id: "starting", repo: "/tmp/none", runnerConfig: {} });
    const result = await applyTransition(scratch.db, "starting", {
      kind: "start-project",
      by: "cli",
      stage: "S01",
      sessionsLimit: 4,
    });
    expect(result.eventRows.map((e) => e.type)).toEqual(["project.started"]);
    expect(result.eventRows[0]?.data).toMatchObject({
      from: "paused",
      stage: "S01",
      sessionsLimit: 4,
      by: "cli",
    });
    const state = await loadProjectState(scratch.db, "starting");
    expect(state.project).toMatchObject({
      status: "active",
      stage: "S01",
      sessionsLimit: 4,
      sessionsUsed: 0,
    });
  });

  it("import-tasks creates every card with its prerequisites, or none", async () => {
    await createProject(scratch.db, { id: "importing", repo: "/tmp/none", runnerConfig: {} });
    const result = await applyTransition(scratch.db, "importing", {
      kind: "import-tasks",
      tasks: [card("S00-001"), card("S00-002", ["S00-001"])],
      by: "test",
    });
    expect(result.eventRows.map((e) => e.type)).toEqual(["task.imported"]);
    expect((await getTask(scratch.db, "importing", "S00-002"))?.prerequisites).toEqual(["S00-001"]);
    await expect(
      applyTransition(scratch.db, "importing", {
        kind: "import-tasks",
        tasks: [card("S00-003"), card("S00-001")],
        by: "test",
      }),
    ).rejects.toMatchObject({ code: "conflict" });
    expect(await getTask(scratch.db, "importing", "S00-003")).toBeUndefined();
  });
});

describe("migrations", () => {
  it("are current after setup, and go down and up again", async () => {
    expect(await pendingMigrations(scratch.db)).toEqual([]);
    // Every migration from the empty database, not a copy of the run's migrated template.
    const other = await createScratchDatabase(undefined, undefined, { template: false });
    try {
      await migrateDown(other.db);
      expect(await pendingMigrations(other.db)).toEqual([LATEST_MIGRATION]);
      await migrateToLatest(other.db);
      expect(await pendingMigrations(other.db)).toEqual([]);
    } finally {
      await other.drop();
    }
  });
});

describe("applyTransition", () => {
  it("claims, submits and records events in one transaction each", async () => {
    await projectWithTasks("p1");
    const claimed = await applyTransition(scratch.db, "p1", { kind: "claim" });
    expect(claimed.changes.runs).toHaveLength(1);
    const run = claimed.changes.runs[0]!;
    expect(run.taskId).toBe("S00-001");
    await applyTransition(scratch.db, "p1", { kind: "run-started", runId: run.id, workerId: "w1" });
    const submitted = await applyTransition(
      scratch.db,
      "p1",
      { kind: "submit", runId: run.id, message: "done", commitSha: "abc", branchHead: "abc" },
      { runReport: { exitCode: 0, output: "hello", durationMs: 12 } },
    );
    expect(submitted.outcome).toBe("applied");
    expect((await getTask(scratch.db, "p1", "S00-001"))?.status).toBe("review");
    const again = await applyTransition(scratch.db, "p1", {
      kind: "submit",
      runId: run.id,
      message: "done",
      commitSha: "abc",
      branchHead: "abc",
    });
    expect(again.outcome).toBe("already_applied");
    const events = await listEvents(scratch.db, {
      projectId: "p1",
      runId: run.id,
      types: ["task.submitted"],
    });
    expect(events).toHaveLength(1);
  });

  it("50 concurrent conflicting transitions on one task: exactly one applies, the others conflict and change nothing", async () => {
    await projectWithTasks("p2", [card("S00-001")]);
    // Put the task in awaiting_input with a pending card via a misconfigured run.
    const claimed = await applyTransition(scratch.db, "p2", { kind: "claim" });
    const runId = claimed.changes.runs[0]!.id;
    await applyTransition(scratch.db, "p2", {
      kind: "run-misconfigured",
      runId,
      reason: "harness_not_configured",
      message: "argv is empty",
    });
    const before = await listEvents(scratch.db, { projectId: "p2" });
    const version = (await getTask(scratch.db, "p2", "S00-001"))!.version;
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        applyTransition(
          scratch.db,
          "p2",
          { kind: "answer", taskId: "S00-001", text: `answer ${i}`, by: `op${i}` },
          { expectedTask: { taskId: "S00-001", version } },
        ),
      ),
    );
    const applied = results.filter((r) => r.status === "fulfilled");
    const conflicts = results.filter((r) => r.status === "rejected" && r.reason instanceof ConflictError);
    expect(applied).toHaveLength(1);
    expect(conflicts).toHaveLength(49);
    const task = await getTask(scratch.db, "p2", "S00-001");
    expect(task?.answers).toHaveLength(1);
    expect(task?.status).toBe("todo");
    const after = await listEvents(scratch.db, { projectId: "p2", after: before.at(-1)?.id });
    expect(after.filter((e) => e.type === "task.answered")).toHaveLength(1);
  });

  it("loses no update when 20 operators answer the same task at once", async () => {
    await projectWithTasks("p5", [card("S00-001")]);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        applyTransition(scratch.db, "p5", { kind: "answer", taskId: "S00-001", text: `a${i}`, by: "op" }),
      ),
    );
    const applied = results.filter((r) => r.status === "fulfilled").length;
    for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(ConflictError);
    expect((await getTask(scratch.db, "p5", "S00-001"))?.answers).toHaveLength(applied);
  });

  it("refuses to apply for a coordinator that lost its lease", async () => {
    await projectWithTasks("p3", [card("S00-001")]);
    const owned = await acquireLeases(scratch.db, "coord-a", 60_000);
    expect(owned).toContain("p3");
    await expect(
      applyTransition(scratch.db, "p3", { kind: "claim" }, { leaseOwner: "coord-b" }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    const state = await loadProjectState(scratch.db, "p3");
    expect(state.runs.size).toBe(0);
    await releaseLeases(scratch.db, "coord-a");
  });
});

/** A worker's start notice, as the coordinator applies it: the domain's run-started at the worker's time. */
async function markRunStarted(projectId: string, runId: string, workerId: string, at: number) {
  const result = await applyTransition(
    scratch.db,
    projectId,
    { kind: "run-started", runId, workerId },
    { ctx: { now: at } },
  );
  return result.eventRows[0] ?? null;
}

describe("run-started", () => {
  it("starts a queued run once, records a redelivery to another worker, and ignores late or repeated notices", async () => {
    await projectWithTasks("p-start", [card("S00-001")]);
    const claimed = await applyTransition(scratch.db, "p-start", { kind: "claim" });
    const runId = claimed.changes.runs[0]?.id ?? "";
    const t0 = Date.now();
    expect((await markRunStarted("p-start", runId, "w1", t0))?.type).toBe("run.started");
    expect(await markRunStarted("p-start", runId, "w1", t0 + 5)).toBeNull();
    const moved = await markRunStarted("p-start", runId, "w2", t0 + 10);
    expect(moved?.type).toBe("run.redelivered");
    expect(moved?.data).toEqual({ workerId: "w2", previousWorkerId: "w1" });
    // w1's notice arriving after the redelivery (older start) does not take the run back.
    expect(await markRunStarted("p-start", runId, "w1", t0 + 1)).toBeNull();
    const row = await scratch.db
      .selectFrom("runs")
      .selectAll()
      .where("id", "=", runId)
      .executeTakeFirstOrThrow();
    expect([row.status, row.worker_id]).toEqual(["running", "w2"]);
    await applyTransition(scratch.db, "p-start", {
      kind: "submit",
      runId,
      message: "done",
      commitSha: "abc",
      branchHead: "abc",
    });
    expect(await markRunStarted("p-start", runId, "w3", t0 + 20)).toBeNull();
    const events = await listEvents(scratch.db, { projectId: "p-start", limit: 100 });
    expect(events.filter((e) => e.type === "run.started")).toHaveLength(1);
    expect(events.filter((e) => e.type === "run.redelivered")).toHaveLength(1);
  });
});

describe("run numbers", () => {
  it("a claim counts each created run among its task's runs of that action", async () => {
    await projectWithTasks("p-number", [card("S00-001")]);
    const first = await applyTransition(scratch.db, "p-number", { kind: "claim" });
    const run = first.changes.runs[0]!;
    expect(first.actionRunNumbers?.get(run.id)).toBe(1);
    await applyTransition(scratch.db, "p-number", {
      kind: "no-transition",
      runId: run.id,
      detail: "exited without a transition",
      crashed: false,
      maxAttempts: 3,
      backoffMs: 0,
    });
    const second = await applyTransition(
      scratch.db,
      "p-number",
      { kind: "claim" },
      { ctx: { now: Date.now() + 1000 } },
    );
    const again = second.changes.runs[0]!;
    expect(again).toMatchObject({ taskId: "S00-001", action: "execute" });
    expect(second.actionRunNumbers?.get(again.id)).toBe(2);
  });
});

describe("leases (rule 11)", () => {
  it("never gives one project two owners, and a crashed owner's lease expires to another replica", async () => {
    await projectWithTasks("p4", [card("S00-001")]);
    const owners = ["c1", "c2", "c3", "c4"];
    const results = await Promise.all(owners.map((o) => acquireLeases(scratch.db, o, 60_000)));
    const holders = results.filter((r) => r.includes("p4"));
    expect(holders).toHaveLength(1);
    const holder = owners[results.findIndex((r) => r.includes("p4"))]!;
    const other = owners.find((o) => o !== holder)!;
    // The holder "crashes": its lease is forced to expire; another replica takes over.
    await sql`UPDATE leases SET expires_at = now() - interval '1 second' WHERE project_id = 'p4'`.execute(
      scratch.db,
    );
    expect(await acquireLeases(scratch.db, other, 60_000)).toContain("p4");
    expect(await acquireLeases(scratch.db, holder, 60_000)).not.toContain("p4");
    await releaseLeases(scratch.db, other);
  });

  it("a claim's lease check never holds up its owner's renewal; a takeover skips the lease until the claim ends", async () => {
    await projectWithTasks("p-lock", [card("S00-001")]);
    expect(await acquireLeases(scratch.db, "lock-a", 60_000)).toContain("p-lock");
    await scratch.db.transaction().execute(async (claim) => {
      // A claim's transaction between its lease check and its commit.
      await holdLease(claim, "p-lock", "lock-a");
      // The owner renews meanwhile: not held up (a wait here would never end before the claim).
      expect(await acquireLeases(scratch.db, "lock-a", 60_000)).toContain("p-lock");
      // Its lease lapses (a no-key update, not held up either); another replica's renewal
      // neither takes it over while the claim is in flight nor waits for the claim.
      await sql`UPDATE leases SET expires_at = now() - interval '1 second' WHERE project_id = 'p-lock'`.execute(
        scratch.db,
      );
      expect(await acquireLeases(scratch.db, "lock-b", 60_000)).not.toContain("p-lock");
    });
    // The claim ended: the next renewal takes the lapsed lease over.
    expect(await acquireLeases(scratch.db, "lock-b", 60_000)).toContain("p-lock");
    await releaseLeases(scratch.db, "lock-b");
  });

  it("a claim whose coordinator went silent mid-transaction is ended by Postgres, and its lease taken over", async () => {
    await projectWithTasks("p-cut", [card("S00-001")]);
    // The cut-off coordinator's pool: Postgres ends its transactions idle for 1 s.
    const cut = connectDatabase(scratch.url, {
      applicationName: "cut-off",
      idleInTransactionTimeoutMs: 1000,
    });
    try {
      expect(await acquireLeases(cut.db, "cut-a", 60_000)).toContain("p-cut");
      let silence: () => void = () => {};
      let held: () => void = () => {};
      const holding = new Promise<void>((resolve) => {
        held = resolve;
      });
      const claim = cut.db.transaction().execute(async (trx) => {
        await holdLease(trx, "p-cut", "cut-a");
        held();
        // Cut off: the client sends nothing more; Postgres still sees its connection open.
        await new Promise<void>((resolve) => {
          silence = resolve;
        });
        await createProject(trx, { id: "p-cut-late", repo: "/tmp/none", runnerConfig: {} });
      });
      const claimEnded = claim.then(
        () => "committed",
        () => "ended",
      );
      await holding;
      await sql`UPDATE leases SET expires_at = now() - interval '1 second' WHERE project_id = 'p-cut'`.execute(
        scratch.db,
      );
      // The renewal of the replica taking over is never held up by the silent claim…
      expect(await acquireLeases(scratch.db, "cut-b", 60_000)).not.toContain("p-cut");
      // …and takes the lease once Postgres has ended the silent claim's transaction.
      await waitUntil(
        async () => (await acquireLeases(scratch.db, "cut-b", 60_000)).includes("p-cut"),
        15_000,
      );
      silence();
      // The silent claim committed nothing: its session was gone when it came back.
      expect(await claimEnded).toBe("ended");
      expect(await projectExistsById("p-cut-late")).toBe(false);
      await releaseLeases(scratch.db, "cut-b");
    } finally {
      await cut.close();
    }
  });
});

async function projectExistsById(id: string): Promise<boolean> {
  const row = await scratch.db.selectFrom("projects").select("id").where("id", "=", id).executeTakeFirst();
  return row !== undefined;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("events", () => {
  it("are append-only", async () => {
    await expect(sql`UPDATE events SET type = 'x'`.execute(scratch.db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM events`.execute(scratch.db)).rejects.toThrow(/append-only/);
  });
});
