/**
 * The run fence against real Postgres (docs/architecture.md, Trust model): a push runs only
 * while the run is live, a cancel committed first refuses it, and a cancel arriving during a
 * landing push waits for it and is then refused, so Postgres never says "cancelled" about work
 * that reached the landing branch.
 */
import {
  cancelTask,
  SUBMITTED_HEAD,
  taskCard,
  tasksInReview,
  until,
  waitForLockWait,
} from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyTransition,
  createScratchDatabase,
  getRun,
  getRunJob,
  getTask,
  holdLiveRun,
  liveRunJob,
  RunNotLiveError,
  runRefusal,
  type ScratchDatabase,
  sql,
  storeRunJob,
  withLiveRun,
} from "../src/index.ts";

let scratch: ScratchDatabase;
beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

const HEAD = SUBMITTED_HEAD;
const inReview = async (projectId: string) => (await tasksInReview(scratch.db, projectId))[0] as string;
const twoInReview = (projectId: string) => tasksInReview(scratch.db, projectId, 2);
const cancel = (projectId: string) => cancelTask(scratch.db, projectId);

/** The advisory lock by which a test's trigger holds a transaction inside its statement. */
const HOLD_KEY = 2207;
/** Waits until `count` statements of this database wait on a lock. */
const waitForLockWaits = (count: number) =>
  until(
    `${count} statements waiting on a lock`,
    async () => {
      const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(scratch.db);
      return (rows[0]?.n ?? 0) >= count;
    },
    { everyMs: 10 },
  );

describe("run fence", () => {
  it("hands a delivery the run's stored job with its answer, and forgets the job once the run ends", async () => {
    const runId = await inReview("fence-job");
    const check = { projectId: "fence-job", runId };
    expect(await liveRunJob(scratch.db, check)).toEqual({ refusal: null, job: null, landedHead: null });
    const job = { runId, prompt: "Review it.", pool: "gpu", env: { TOKEN: "secret" } };
    await storeRunJob(scratch.db, runId, job);
    // Stored again (a re-enqueued run): replaced, not duplicated.
    await storeRunJob(scratch.db, runId, { ...job, prompt: "Review it again." });
    expect(await liveRunJob(scratch.db, check)).toEqual({
      refusal: null,
      job: { ...job, prompt: "Review it again." },
      landedHead: null,
    });
    const run = await getRun(scratch.db, runId);
    expect([run?.prompt, run?.prompt_chars, run?.pool]).toEqual(["Review it again.", 16, "gpu"]);
    // The run's ending update deletes its job (the run's secrets do not outlive it).
    await applyTransition(scratch.db, "fence-job", {
      kind: "approve",
      runId,
      landedSha: HEAD,
      landedBranch: "main",
      reviewedHead: HEAD,
    });
    expect(await getRunJob(scratch.db, runId)).toBeNull();
    expect(await liveRunJob(scratch.db, check)).toEqual({ refusal: "the run is finished" });
    // A run that already ended gets no job row, and is not to be queued.
    expect(await storeRunJob(scratch.db, runId, job)).toBe(false);
    expect(await getRunJob(scratch.db, runId)).toBeNull();
  });

  it("keeps the prompt once, on the run's row, and hands the job back with it", async () => {
    const runId = await inReview("fence-prompt");
    const check = { projectId: "fence-prompt", runId };
    const job = { runId, prompt: 'Review the "prompt" once.', pool: "small", env: {} };
    await storeRunJob(scratch.db, runId, job);
    const stored = await sql<{ job: Record<string, unknown> }>`
      SELECT job FROM run_jobs WHERE run_id = ${runId}`.execute(scratch.db);
    expect(stored.rows[0]?.job).toEqual({ runId, pool: "small", env: {} });
    expect(await getRunJob(scratch.db, runId)).toEqual(job);
    expect(await liveRunJob(scratch.db, check)).toEqual({ refusal: null, job, landedHead: null });
    // A job stored with its prompt (before it was kept once) reads the same.
    await sql`UPDATE run_jobs SET job = ${JSON.stringify(job)}::jsonb WHERE run_id = ${runId}`.execute(
      scratch.db,
    );
    expect(await getRunJob(scratch.db, runId)).toEqual(job);
    // With no prompt on the run's row, a job keeps its own.
    await sql`UPDATE runs SET prompt = NULL WHERE id = ${runId}`.execute(scratch.db);
    expect(await liveRunJob(scratch.db, check)).toEqual({ refusal: null, job, landedHead: null });
  });

  it("a cancel that updated the run before its job is stored leaves no job row once it commits", async () => {
    const runId = await inReview("fence-job-race");
    const job = { runId, prompt: "Review it.", pool: "default" };
    // The operator's cancel is held inside its statement, after it updated the run (whose row lock
    // it keeps), by this test's trigger: it waits on an advisory lock the test holds.
    await sql`CREATE FUNCTION hold_run_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(${sql.lit(HOLD_KEY)}); RETURN NEW; END $$`.execute(
      scratch.db,
    );
    await sql`CREATE TRIGGER hold_run_update AFTER UPDATE ON runs FOR EACH ROW
      WHEN (NEW.id = ${sql.lit(runId)}) EXECUTE FUNCTION hold_run_update()`.execute(scratch.db);
    try {
      let cancelling: Promise<unknown> | null = null;
      let storing: Promise<boolean> | null = null;
      await scratch.db.connection().execute(async (holder) => {
        await sql`SELECT pg_advisory_lock(${HOLD_KEY})`.execute(holder);
        cancelling = cancel("fence-job-race");
        await waitForLockWaits(1);
        // The coordinator stores the job while the cancel is not yet committed: it must wait.
        storing = storeRunJob(scratch.db, runId, job);
        await waitForLockWaits(2);
        await sql`SELECT pg_advisory_unlock(${HOLD_KEY})`.execute(holder);
      });
      await cancelling;
      expect(await storing).toBe(false);
    } finally {
      await sql`DROP TRIGGER hold_run_update ON runs`.execute(scratch.db);
      await sql`DROP FUNCTION hold_run_update()`.execute(scratch.db);
    }
    expect(await getRunJob(scratch.db, runId)).toBeNull();
    expect((await getRun(scratch.db, runId))?.status).toBe("cancelled");
  });

  it("refuses every push of a run whose task was cancelled first, and says why", async () => {
    const runId = await inReview("fence-first");
    const check = { projectId: "fence-first", runId, landing: { sourceSha: HEAD } };
    expect(await runRefusal(scratch.db, check)).toBeNull();
    await cancel("fence-first");
    expect(await runRefusal(scratch.db, check)).toBe("the run is cancelled");
    let pushed = false;
    const attempt = withLiveRun(
      scratch.db,
      check,
      async () => {
        pushed = true;
        return { ok: true };
      },
      (r) => r.ok,
    );
    await expect(attempt).rejects.toBeInstanceOf(RunNotLiveError);
    expect(pushed).toBe(false);
  });

  it("a fence opened ahead of its push holds the run: a cancel waits for the push; closed unused, the cancel goes through", async () => {
    const runId = await inReview("fence-held");
    const held = await holdLiveRun(scratch.db, { projectId: "fence-held", runId });
    // The worker commits meanwhile; a cancel arriving now waits for the fence's row locks.
    let cancelSettled = false;
    const cancelled = cancel("fence-held").finally(() => {
      cancelSettled = true;
    });
    await waitForLockWait(scratch.db, "tasks");
    expect(cancelSettled).toBe(false);
    let pushed = false;
    const value = await held.move(
      async () => {
        pushed = true;
        return { ok: true };
      },
      (r) => r.ok,
    );
    expect({ pushed, value }).toEqual({ pushed: true, value: { ok: true } });
    await cancelled;
    expect((await getRun(scratch.db, runId))?.status).toBe("cancelled");
    // The next fence reads the cancel: its push never runs.
    const after = await holdLiveRun(scratch.db, { projectId: "fence-held", runId });
    await expect(
      after.move(
        async () => ({ ok: true }),
        (r) => r.ok,
      ),
    ).rejects.toBeInstanceOf(RunNotLiveError);

    // Opened and closed unused: nothing is held any more.
    const other = await inReview("fence-closed");
    const unused = await holdLiveRun(scratch.db, { projectId: "fence-closed", runId: other });
    await unused.close();
    await cancel("fence-closed");
    expect((await getRun(scratch.db, other))?.status).toBe("cancelled");
  });

  it("refuses a landing of any head but the one recorded at the submit", async () => {
    const runId = await inReview("fence-head");
    const other = { projectId: "fence-head", runId, landing: { sourceSha: "b".repeat(40) } };
    await expect(
      withLiveRun(
        scratch.db,
        other,
        async () => ({ ok: true }),
        (r) => r.ok,
      ),
    ).rejects.toThrow(/not the submitted head Postgres recorded/);
  });

  it("a cancel during a landing push waits for it, then is refused: the task finishes as landed", async () => {
    const runId = await inReview("fence-during");
    const check = { projectId: "fence-during", runId, landing: { sourceSha: HEAD } };
    let release: () => void = () => {};
    let pushing: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      pushing = resolve;
    });
    const landing = withLiveRun(
      scratch.db,
      check,
      async () => {
        pushing();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return { ok: true };
      },
      (r) => r.ok,
    );
    await started;
    let cancelSettled = false;
    const cancelled = cancel("fence-during").finally(() => {
      cancelSettled = true;
    });
    // It is refused as soon as the push commits, maybe before `expect` below attaches to it: a
    // handler now keeps that from being an unhandled rejection (seen under load).
    cancelled.catch(() => undefined);
    // The cancel cannot commit while the push holds the run's rows.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(cancelSettled).toBe(false);
    release();
    await landing;
    await expect(cancelled).rejects.toThrow(/already landed|concurrent transition/);
    expect((await getTask(scratch.db, "fence-during", "S00-001"))?.status).toBe("review");
    expect((await getRun(scratch.db, runId))?.transition).toBe("approve");
    // The run's result then finishes the task.
    await applyTransition(scratch.db, "fence-during", {
      kind: "approve",
      runId,
      landedSha: "c".repeat(40),
      landedBranch: "main",
    });
    expect((await getTask(scratch.db, "fence-during", "S00-001"))?.status).toBe("done");
    await expect(cancel("fence-during")).rejects.toThrow(/already done/);
  });

  it("a cancel once the landing is recorded is refused with the reason", async () => {
    const runId = await inReview("fence-after");
    const check = { projectId: "fence-after", runId, landing: { sourceSha: HEAD } };
    await withLiveRun(
      scratch.db,
      check,
      async () => ({ ok: true }),
      (r) => r.ok,
    );
    await expect(cancel("fence-after")).rejects.toThrow(/approved work has already landed/);
    expect((await getTask(scratch.db, "fence-after", "S00-001"))?.status).toBe("review");
  });

  it("records what a landing put on its branch, and a start reads the newest landing in push order, whatever order the fences commit in", async () => {
    const [first, second] = await twoInReview("fence-landed");
    const landing = { sourceSha: HEAD, ordered: true };
    const X1 = "1".repeat(40);
    const X2 = "2".repeat(40);
    // Both fences open ahead (their reads done). The first landing draws its place and pushes
    // X1; the second lands onto X1 afterwards, so it draws its place later, and its fence
    // commits first: the first one's commit is held back until then.
    const a = await holdLiveRun(scratch.db, { projectId: "fence-landed", runId: first as string, landing });
    const b = await holdLiveRun(scratch.db, { projectId: "fence-landed", runId: second as string, landing });
    let pushedX1: () => void = () => {};
    let finishA: () => void = () => {};
    const x1Pushed = new Promise<void>((resolve) => {
      pushedX1 = resolve;
    });
    const aDone = a.move(
      async () => {
        pushedX1();
        await new Promise<void>((resolve) => {
          finishA = resolve;
        });
        return { ok: true };
      },
      () => ({ branch: "main", sha: X1 }),
    );
    await x1Pushed;
    await b.move(
      async () => ({ ok: true }),
      () => ({ branch: "main", sha: X2 }),
    );
    finishA();
    await aDone;
    const recorded = await sql<{ landed_sha: string; landed_branch: string }>`
      SELECT landed_sha, landed_branch FROM runs WHERE project_id = 'fence-landed' AND landing_seq IS NOT NULL
      ORDER BY landing_seq`.execute(scratch.db);
    expect(recorded.rows).toEqual([
      { landed_sha: X1, landed_branch: "main" },
      { landed_sha: X2, landed_branch: "main" },
    ]);
    // A new run of the project starts reading X2: the landing that went onto the other.
    await applyTransition(scratch.db, "fence-landed", {
      kind: "approve",
      runId: first as string,
      landedSha: X1,
      landedBranch: "main",
      reviewedHead: HEAD,
    });
    await applyTransition(scratch.db, "fence-landed", {
      kind: "import-tasks",
      tasks: [taskCard("S00-003")],
      by: "t",
    });
    const next = (await applyTransition(scratch.db, "fence-landed", { kind: "claim" })).changes.runs[0];
    expect(next?.taskId).toBe("S00-003");
    expect(
      await liveRunJob(scratch.db, { projectId: "fence-landed", runId: next?.id as string }),
    ).toMatchObject({ refusal: null, landedHead: { branch: "main", sha: X2 } });
  });

  it("a landing push that did not go through records no landed commit", async () => {
    const runId = await inReview("fence-lost");
    await withLiveRun(
      scratch.db,
      { projectId: "fence-lost", runId, landing: { sourceSha: HEAD, ordered: true } },
      async () => ({ ok: false }),
      (r) => (r.ok ? { branch: "main", sha: "3".repeat(40) } : false),
    );
    const run = await getRun(scratch.db, runId);
    expect([run?.transition, run?.landed_sha, run?.landing_seq]).toEqual([null, null, null]);
    expect(await liveRunJob(scratch.db, { projectId: "fence-lost", runId })).toMatchObject({
      landedHead: null,
    });
  });
});
