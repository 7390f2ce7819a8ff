import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { jobWithPrompt } from "./run-job-prompt.ts";

/**
 * The fence around every ref a worker moves (docs/architecture.md, Trust model: the run fence).
 * Redis fences a delivery by its job lock; only Postgres knows whether the run still counts.
 * A run may move a ref only while Postgres says:
 *
 *   - the run is active (queued or running: the run-started notice may not be applied yet);
 *   - its task is neither done nor cancelled, and its project is not stopped;
 *   - for a landing, the run is the task's review, the task is in review, and the head being
 *     landed is the head Postgres recorded at the submit (the work the reviewer approved).
 *
 * `withLiveRun` reads that in one query that also locks the run and task rows (FOR NO KEY
 * UPDATE), keeps the lock while `move` runs (the push), and commits after it. A cancel or a
 * stop writes both rows, so it waits for the push and is ordered after it; a cancel committed
 * first makes the read fail and nothing is pushed. A landing that went through is recorded
 * in the same transaction (`runs.transition = 'approve'` while the run is still running), so
 * the cancel that waited is then refused: the work is on the branch, the run's result will
 * finish the task. Bound: a worker that dies after the remote took the push and before this
 * commit leaves a ref Postgres does not know of (the window of one commit).
 *
 * The landing's record also names what it landed (`landed_sha` on `landed_branch`) and its
 * place in the order of landings, `landing_seq`, drawn from a sequence right before the push,
 * after the landing read the branch head it goes onto. A landing goes onto the commit of the
 * one before it only after that commit was pushed, so after that one drew its number: the
 * largest `landing_seq` of a project is its newest landing, in whatever order the fences
 * commit. A run's start reads it (`liveRunJob`, same statement): the landing branch's head a
 * checkout may trust its mirror for (run-contract `expectedBase`).
 */
export interface RunFenceCheck {
  projectId: string;
  runId: string;
  /**
   * Set for a landing: the task head the reviewer approved, which must be the one recorded.
   * `ordered`: the push puts a commit on the landing branch (not a pull request branch), so its
   * place in the order of landings is drawn right before it (`landing_seq`).
   */
  landing?: { sourceSha: string; ordered?: boolean } | undefined;
}

/**
 * A landing's commit and the branch it went onto, as the run fence recorded it (migration 0027):
 * for a run's start, the newest landing of its project Postgres knows of.
 */
export interface LandedHead {
  branch: string;
  sha: string;
}

/** The run may not move a ref: `reason` says what Postgres holds instead. */
export class RunNotLiveError extends Error {
  override readonly name = "RunNotLiveError";
  constructor(
    readonly runId: string,
    readonly reason: string,
  ) {
    super(`run ${runId} may not move a ref: ${reason}`);
  }
}

interface FenceRow {
  run_status: string;
  action: string;
  task_id: string;
  task_status: string;
  branch_head: string | null;
  project_status: string;
}

/** Why the run may not move a ref now, or null when it may. */
export function fenceRefusal(
  row: FenceRow | undefined,
  check: Pick<RunFenceCheck, "landing">,
): string | null {
  if (!row) return "Postgres has no such run";
  if (row.run_status !== "queued" && row.run_status !== "running") return `the run is ${row.run_status}`;
  if (row.task_status === "cancelled" || row.task_status === "done") {
    return `task ${row.task_id} is ${row.task_status}`;
  }
  if (row.project_status === "stopped") return "the project is stopped";
  if (!check.landing) return null;
  if (row.action !== "review" || row.task_status !== "review") {
    return `a landing needs the task's review run on a task in review (run: ${row.action}, task: ${row.task_status})`;
  }
  if (row.branch_head !== check.landing.sourceSha) {
    return `the head to land (${check.landing.sourceSha}) is not the submitted head Postgres recorded (${row.branch_head ?? "none"})`;
  }
  return null;
}

/**
 * Which run a start reads: a queued reference may name the run by its id alone (its project is
 * then the run's own; `runs.id` is the primary key).
 */
export type RunStartCheck = Omit<RunFenceCheck, "projectId" | "landing"> & { projectId?: string | undefined };

/** The fence's facts about a run, locked (`lock`) for a push, with its stored job (`withJob`) for a start. */
async function readFence(
  db: Db,
  check: RunStartCheck,
  lock: boolean,
  withJob = false,
): Promise<(FenceRow & StartColumns) | undefined> {
  const forLock = lock ? sql`FOR NO KEY UPDATE OF r, t` : sql``;
  // A start reads its stored job and the newest landing of its project (the partial index of
  // migration 0027: one index row).
  const job = withJob
    ? sql`, ${jobWithPrompt("j.job", "r.prompt")} AS job, lh.landed_sha, lh.landed_branch`
    : sql``;
  const joinJob = withJob
    ? sql`LEFT JOIN run_jobs j ON j.run_id = r.id
      LEFT JOIN LATERAL (
        SELECT l.landed_sha, l.landed_branch FROM runs l
        WHERE l.project_id = r.project_id AND l.landing_seq IS NOT NULL
        ORDER BY l.landing_seq DESC LIMIT 1
      ) lh ON true`
    : sql``;
  const ofProject = check.projectId === undefined ? sql`` : sql`AND r.project_id = ${check.projectId}`;
  const result = await sql<FenceRow & StartColumns>`
    SELECT r.status AS run_status, r.action, r.task_id, t.status AS task_status, t.branch_head,
           p.status AS project_status ${job}
    FROM runs r
    JOIN tasks t ON t.project_id = r.project_id AND t.id = r.task_id
    JOIN projects p ON p.id = r.project_id
    ${joinJob}
    WHERE r.id = ${check.runId} ${ofProject}
    ${forLock}`.execute(db);
  return result.rows[0];
}

/** What a start's read adds to the fence's row: the stored job and the project's newest landing. */
interface StartColumns {
  job?: unknown | null;
  landed_sha?: string | null;
  landed_branch?: string | null;
}

/**
 * What a delivery of a queued run reference reads before it starts, in one statement: why the
 * run may not act (as `runRefusal`), else its stored job (`run_jobs`, unvalidated JSON: the
 * worker parses it), null when none is stored.
 */
export async function liveRunJob(
  db: Db,
  check: RunStartCheck,
): Promise<{ refusal: string } | { refusal: null; job: unknown | null; landedHead: LandedHead | null }> {
  const row = await readFence(db, check, false, true);
  const refusal = fenceRefusal(row, {});
  if (refusal !== null) return { refusal };
  const landedHead =
    row?.landed_sha && row.landed_branch ? { branch: row.landed_branch, sha: row.landed_sha } : null;
  return { refusal, job: row?.job ?? null, landedHead };
}

/** Why the run may not move a ref now (no lock taken), or null: for a delivery deciding whether to start. */
export async function runRefusal(db: Db, check: RunFenceCheck): Promise<string | null> {
  return fenceRefusal(await readFence(db, check, false), check);
}

/**
 * The fence's transaction, opened ahead of its push (`holdLiveRun`): its read is done and the run
 * and task rows are locked, so nothing it read can change until it ends.
 */
export interface HeldRunFence {
  /**
   * Runs `move` only if the read found the run live, then commits (recording a landing that
   * went through: `moved` says whether it did, and for a landing what it landed, recorded with
   * its place in the order of landings); RunNotLiveError (nothing moved) otherwise. Once per fence.
   */
  move<T>(move: () => Promise<T>, moved: (value: T) => boolean | LandedHead): Promise<T>;
  /** Ends the transaction unused (a rollback); nothing after `move`. */
  close(): Promise<void>;
}

/**
 * Opens the fence's transaction now: its read and row locks, before the push it guards is ready
 * (the worker commits meanwhile), so the push waits for no round trip. The caller must `move`
 * or `close` it: it holds a pooled connection and row locks until then.
 */
export async function holdLiveRun(db: Db, check: RunFenceCheck): Promise<HeldRunFence> {
  const trx = await db.startTransaction().execute();
  let row: FenceRow | undefined;
  try {
    row = await readFence(trx, check, true);
  } catch (error) {
    await trx
      .rollback()
      .execute()
      .catch(() => undefined);
    throw error;
  }
  let ended = false;
  const end = async (commit: boolean) => {
    if (ended) return;
    ended = true;
    await (commit ? trx.commit() : trx.rollback()).execute();
  };
  return {
    async move(move, moved) {
      if (ended) throw new Error(`the run fence of ${check.runId} has already ended`);
      const refusal = fenceRefusal(row, check);
      if (refusal !== null) {
        await end(false);
        throw new RunNotLiveError(check.runId, refusal);
      }
      try {
        // Drawn after the landing read the head it goes onto, before its push (see above).
        const seq = check.landing?.ordered ? await nextLandingSeq(trx) : null;
        const value = await move();
        const landed = check.landing ? moved(value) : false;
        if (landed !== false) {
          const head =
            landed === true || seq === null
              ? {}
              : { landed_sha: landed.sha, landed_branch: landed.branch, landing_seq: seq };
          await trx
            .updateTable("runs")
            .set({ transition: "approve", ...head })
            .where("id", "=", check.runId)
            .where("status", "in", ["queued", "running"])
            .execute();
        }
        await end(true);
        return value;
      } catch (error) {
        await end(false).catch(() => undefined);
        throw error;
      }
    },
    close: () => end(false).catch(() => undefined),
  };
}

/** The next place in the order of landings (migration 0027's sequence, cache 1: numbers rise in the order drawn). */
async function nextLandingSeq(db: Db): Promise<string> {
  const { rows } = await sql<{ seq: string }>`SELECT nextval('run_landing_seq')::text AS seq`.execute(db);
  return rows[0]?.seq as string;
}

/**
 * Runs `move` (a push) only while the run is live, holding its run and task rows locked until
 * `move` returns; throws RunNotLiveError (nothing moved) otherwise. `moved(value)` says
 * whether the push went through; a landing that did is recorded before the commit.
 */
export async function withLiveRun<T>(
  db: Db,
  check: RunFenceCheck,
  move: () => Promise<T>,
  moved: (value: T) => boolean | LandedHead,
): Promise<T> {
  return (await holdLiveRun(db, check)).move(move, moved);
}
