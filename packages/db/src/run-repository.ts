import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { RunRow } from "./database-schema.ts";
import { PAGE_LIMITS, resolvePageLimit } from "./page-limits.ts";
import type { RidingQuery } from "./riding-writes.ts";
import { jobWithPrompt, storedJob } from "./run-job-prompt.ts";
import type { RunReport } from "./run-report-columns.ts";
import { runTranscriptInsert } from "./transcript-repository.ts";

/** Runs that should have a live queue job: queued or running, across the given projects. */
export async function activeRuns(db: Db, projectIds: readonly string[]): Promise<RunRow[]> {
  if (projectIds.length === 0) return [];
  return db
    .selectFrom("runs")
    .selectAll()
    .where("project_id", "in", [...projectIds])
    .where("status", "in", ["queued", "running"])
    .orderBy("created_at")
    .execute();
}

/** The worker pools some queued or running run needs (queue depths are counted per pool). */
export async function openRunPools(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom("runs")
    .select("pool")
    .distinct()
    .where("status", "in", ["queued", "running"])
    .execute();
  return rows.map((r) => r.pool);
}

/**
 * One page of the active runs (queued or running) of the projects `owner` leases, by run id
 * after `afterId` (null: from the first): the coordinator's reconcile sweep walks them a
 * bounded batch at a time, one statement per batch whatever the number of projects.
 */
export async function activeRunsOfLeaseOwner(
  db: Db,
  owner: string,
  afterId: string | null,
  limit: number,
): Promise<{ id: string; projectId: string; pool: string }[]> {
  let query = db
    .selectFrom("runs")
    .innerJoin("leases", "leases.project_id", "runs.project_id")
    .select(["runs.id", "runs.project_id", "runs.pool"])
    .where("leases.owner", "=", owner)
    .where("runs.status", "in", ["queued", "running"]);
  if (afterId !== null) query = query.where("runs.id", ">", afterId);
  const rows = await query.orderBy("runs.id").limit(limit).execute();
  return rows.map((r) => ({ id: r.id, projectId: r.project_id, pool: r.pool }));
}

/**
 * SQL of a run's number among its task's runs of the same action, from the stored runs (1 = the
 * first): "execute #2" is the task's second executor run, whatever attempt of a failure retry
 * it was. `alias` names the run's table in the statement. Indexed by runs_task_idx.
 */
export function runNumberSql(alias: string) {
  const run = sql.table(alias);
  return sql<number>`(SELECT count(*)::int FROM runs AS same
    WHERE same.project_id = ${run}.project_id AND same.task_id = ${run}.task_id
      AND same.action = ${run}.action AND (same.created_at, same.id) <= (${run}.created_at, ${run}.id))`;
}

/** A run with its `number` among the task's runs of its action (runNumberSql). */
export type NumberedRunRow = RunRow & { number: number };

export async function getRun(db: Db, runId: string): Promise<NumberedRunRow | undefined> {
  return db
    .selectFrom("runs")
    .selectAll()
    .select(runNumberSql("runs").as("number"))
    .where("id", "=", runId)
    .executeTakeFirst();
}

export interface ListRunsFilter {
  projectId?: string;
  taskId?: string;
  status?: readonly string[];
  limit?: number;
  /** Cursor: created_at of the last row, ISO. */
  before?: string | null;
}

/** Newest first, each with its `number`; `prompt` and `output` are left out of listings (fetch one run for them). */
export async function listRuns(db: Db, filter: ListRunsFilter = {}) {
  const limit = resolvePageLimit(filter.limit, PAGE_LIMITS.runs);
  let q = db
    .selectFrom("runs")
    .select([
      "id",
      "project_id",
      "task_id",
      "agent_id",
      "action",
      "attempt",
      "status",
      "transition",
      "failure",
      "worker_id",
      "exit_code",
      "signal",
      "timed_out",
      "duration_ms",
      "prompt_chars",
      "scope_violations",
      "commit_sha",
      "tokens_in",
      "tokens_out",
      "tokens_cached",
      "cost_usd",
      "tokens_unpriced",
      "usage_source",
      "image_digest",
      "sandbox_driver",
      "created_at",
      "started_at",
      "ended_at",
      runNumberSql("runs").as("number"),
    ])
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit);
  if (filter.projectId) q = q.where("project_id", "=", filter.projectId);
  if (filter.taskId) q = q.where("task_id", "=", filter.taskId);
  if (filter.status && filter.status.length > 0) q = q.where("status", "in", [...filter.status]);
  if (filter.before) q = q.where("created_at", "<", new Date(filter.before));
  return q.execute();
}

/** The worker pool of each of these runs (where its job was queued), in one statement. */
export async function runPools(db: Db, runIds: readonly string[]): Promise<Map<string, string>> {
  if (runIds.length === 0) return new Map();
  const rows = await db
    .selectFrom("runs")
    .select(["id", "pool"])
    .where("id", "in", [...runIds])
    .execute();
  return new Map(rows.map((r) => [r.id, r.pool]));
}

/**
 * Stores the run's job before its reference is queued (run-contract RunRef): the job itself in
 * `run_jobs` (what a worker reads with its run fence), its rendered prompt and its worker pool on
 * the run's row; one statement. Storing it again (a re-enqueued run) replaces it. Returns false,
 * storing nothing, when the run already ended: nothing would delete a job row then, and its
 * reference must not be queued.
 *
 * The job row is inserted from the run's own update: a cancel that updated the run first holds
 * its row lock, so this update waits for the cancel's commit and then finds the run ended (a job
 * inserted from a read beside the update could slip in after the cancel deleted the run's job,
 * outliving the run with its secrets).
 */
export async function storeRunJob(
  db: Db,
  runId: string,
  job: { prompt: string; pool: string },
): Promise<boolean> {
  const stored = await db
    .with("live", (qb) =>
      qb
        .updateTable("runs")
        .set({ prompt: job.prompt, prompt_chars: job.prompt.length, pool: job.pool })
        .where("id", "=", runId)
        .where("status", "in", ["queued", "running"])
        .returning("id"),
    )
    .insertInto("run_jobs")
    .columns(["run_id", "job"])
    .expression((eb) => eb.selectFrom("live").select(["live.id as run_id", storedJob(job).as("job")]))
    .onConflict((oc) => oc.column("run_id").doUpdateSet((eb) => ({ job: eb.ref("excluded.job") })))
    .returning("run_id")
    .executeTakeFirst();
  return stored !== undefined;
}

/** A run's stored job (storeRunJob) with its prompt, or null: none stored, or the run ended. */
export async function getRunJob(db: Db, runId: string): Promise<unknown | null> {
  const row = await db
    .selectFrom("run_jobs as j")
    .innerJoin("runs as r", "r.id", "j.run_id")
    .select(jobWithPrompt("j.job", "r.prompt").as("job"))
    .where("j.run_id", "=", runId)
    .executeTakeFirst();
  return row?.job ?? null;
}

/** How many runs of this action the task has had (the next run's number is this + 1). */
export async function countRunsOfAction(
  db: Db,
  projectId: string,
  taskId: string,
  action: RunRow["action"],
): Promise<number> {
  const row = await db
    .selectFrom("runs")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("project_id", "=", projectId)
    .where("task_id", "=", taskId)
    .where("action", "=", action)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** What a task's runs spent, summed (every run: failed and timed-out ones spent too). */
export async function taskUsage(
  db: Db,
  projectId: string,
  taskId: string,
): Promise<{
  runs: number;
  tokens_in: number;
  tokens_out: number;
  tokens_cached: number;
  tokens_unpriced: number;
  cost_usd: number;
}> {
  const row = await db
    .selectFrom("runs")
    .select((eb) => [
      eb.fn.countAll<string>().as("runs"),
      eb.fn.coalesce(eb.fn.sum<string>("tokens_in"), eb.lit(0)).as("tokens_in"),
      eb.fn.coalesce(eb.fn.sum<string>("tokens_out"), eb.lit(0)).as("tokens_out"),
      eb.fn.coalesce(eb.fn.sum<string>("tokens_cached"), eb.lit(0)).as("tokens_cached"),
      eb.fn.coalesce(eb.fn.sum<string>("tokens_unpriced"), eb.lit(0)).as("tokens_unpriced"),
      eb.fn.coalesce(eb.fn.sum<number>("cost_usd"), eb.lit(0)).as("cost_usd"),
    ])
    .where("project_id", "=", projectId)
    .where("task_id", "=", taskId)
    .executeTakeFirstOrThrow();
  return {
    runs: Number(row.runs),
    tokens_in: Number(row.tokens_in),
    tokens_out: Number(row.tokens_out),
    tokens_cached: Number(row.tokens_cached),
    tokens_unpriced: Number(row.tokens_unpriced),
    cost_usd: Number(row.cost_usd),
  };
}

/**
 * What rides on a run's update as CTEs instead of statements of their own, named with `prefix`:
 * the run's transcript (with its report), and, once the run ends, the delete of its stored job
 * (`run_jobs`: nothing reads it after, and it holds the run's secrets).
 */
export function runUpdateRides(
  db: Db,
  run: { runId: string; projectId: string; taskId: string },
  status: string,
  transcript: RunReport["transcript"],
  prefix = "",
): { name: string; query: RidingQuery }[] {
  const rides: { name: string; query: RidingQuery }[] = [];
  if (transcript)
    rides.push({ name: `${prefix}transcript`, query: runTranscriptInsert(db, run, transcript) });
  if (status !== "queued" && status !== "running") {
    rides.push({
      name: `${prefix}job_gone`,
      query: db.deleteFrom("run_jobs").where("run_id", "=", run.runId),
    });
  }
  return rides;
}
