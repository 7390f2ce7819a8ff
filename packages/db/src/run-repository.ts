import { sql } from "kysely";
import { type Db, json } from "./connection.ts";
import type { EventRow, RunRow } from "./database-schema.ts";

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

export async function getRun(db: Db, runId: string): Promise<RunRow | undefined> {
  return db.selectFrom("runs").selectAll().where("id", "=", runId).executeTakeFirst();
}

export interface ListRunsFilter {
  projectId?: string;
  taskId?: string;
  status?: readonly string[];
  limit?: number;
  /** Cursor: created_at of the last row, ISO. */
  before?: string | null;
}

/** Newest first; `prompt` and `output` are left out of listings (fetch one run for them). */
export async function listRuns(db: Db, filter: ListRunsFilter = {}) {
  const limit = Math.min(Math.max(filter.limit ?? 100, 1), 500);
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
      "cost_usd",
      "created_at",
      "started_at",
      "ended_at",
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

/** Stores the rendered prompt as soon as the worker reports it (before the outcome). */
export async function storeRunPrompt(db: Db, runId: string, prompt: string): Promise<void> {
  await db.updateTable("runs").set({ prompt, prompt_chars: prompt.length }).where("id", "=", runId).execute();
}

/**
 * queued → running when a worker picks a run up. Not a task transition, so it skips the
 * state machine's full load: one locked read, one guarded UPDATE and its event, in one
 * transaction. A run already running under another worker was redelivered (its first
 * worker died or froze past its job lock): the run records its new worker with a
 * `run.redelivered` event. Idempotent by run and worker: a repeated or late notice (the run
 * ended, the same worker, an older start) changes nothing and returns null.
 */
export async function markRunStarted(
  db: Db,
  runId: string,
  workerId: string,
  at: number,
): Promise<EventRow | null> {
  return db.transaction().execute(async (trx) => {
    const run = await trx
      .selectFrom("runs")
      .select(["project_id", "task_id", "status", "worker_id", "started_at"])
      .where("id", "=", runId)
      .forUpdate()
      .executeTakeFirst();
    if (!run) return null;
    const startedAt = new Date(at);
    let type: "run.started" | "run.redelivered";
    let data: Record<string, unknown>;
    if (run.status === "queued") {
      type = "run.started";
      data = { workerId };
    } else if (
      run.status === "running" &&
      run.worker_id !== workerId &&
      (run.started_at === null || run.started_at.getTime() < at)
    ) {
      type = "run.redelivered";
      data = { workerId, previousWorkerId: run.worker_id };
    } else {
      return null;
    }
    await trx
      .updateTable("runs")
      .set({ status: "running", worker_id: workerId, started_at: startedAt })
      .where("id", "=", runId)
      .execute();
    const event = await trx
      .insertInto("events")
      .values({ project_id: run.project_id, task_id: run.task_id, run_id: runId, type, data: json(data) })
      .returningAll()
      .executeTakeFirstOrThrow();
    await sql`SELECT pg_notify('overseer_events', ${run.project_id})`.execute(trx);
    return event;
  });
}
