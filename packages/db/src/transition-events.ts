/**
 * The last write of a transition: its events, with the NOTIFY, and the jobs of the runs a claim
 * created (`ApplyOptions.runJobs`) riding on the same statement, so that storing a claimed
 * run's job costs the claim neither a statement nor a commit of its own; its task and run
 * updates ride on it too (riding-writes.ts).
 */
import type { ApplyResult, ProjectState, Run } from "@overseer/domain";
import { type QueryCreator, sql } from "kysely";
import { type Db, json } from "./connection.ts";
import type { Database, EventRow, ProjectRow } from "./database-schema.ts";
import { RidingWrites } from "./riding-writes.ts";
import { storedJob } from "./run-job-prompt.ts";

export const POSTGRES_NOTIFY_CHANNEL = "overseer_events";

/** What `storeRunJob` stores of a job: the whole job (JSON) and, on the run's row, these two. */
export interface StoredRunJob {
  readonly prompt: string;
  readonly pool: string;
}

/** A run the transition created, with its number among its task's runs of its action (1 for the first). */
export interface CreatedRun {
  readonly run: Run;
  readonly number: number;
}

/**
 * The jobs of the runs a transition created, built inside its transaction once the runs and the
 * project row are written: `state` as the transition left it, `projectRow` as its update left
 * it (null when it did not update the project row). Keyed by run id; a run left out (its job
 * could not be built) gets none. Called again when the transaction is retried on a conflict.
 */
export type RunJobsBuilder = (
  created: { state: ProjectState; projectRow: ProjectRow | null; runs: readonly CreatedRun[] },
  db: Db,
) => Promise<ReadonlyMap<string, StoredRunJob>>;

/**
 * The events, and the transition's NOTIFY in the same statement (sent at commit; Postgres
 * delivers one notification however many rows name the same payload). The created runs' jobs
 * ride on it: each in `run_jobs`, its prompt and pool on its run's row (as storeRunJob); so do
 * the transition's `writes` (its task and run updates), whose guards it checks. With no event
 * to insert, the jobs and writes are one statement of their own.
 */
export async function insertEvents(
  db: Db,
  projectId: string,
  events: ApplyResult["events"],
  payload: string,
  jobs: ReadonlyMap<string, StoredRunJob> = new Map(),
  writes: RidingWrites = new RidingWrites(),
): Promise<EventRow[]> {
  const creator = writes.on(withRunJobs(db, jobs));
  if (events.length === 0) {
    if (jobs.size > 0 || writes.size > 0) {
      const row = await creator.selectNoFrom(writes.counts().as("guard_counts")).executeTakeFirstOrThrow();
      writes.check(row.guard_counts);
    }
    return [];
  }
  const rows = await creator
    .with("inserted", (qb) =>
      qb
        .insertInto("events")
        .values(
          events.map((e) => ({
            project_id: projectId,
            task_id: e.taskId,
            run_id: e.runId,
            type: e.type,
            data: json(e.data),
          })),
        )
        .returningAll(),
    )
    .selectFrom("inserted")
    .selectAll()
    .select(sql<string>`pg_notify(${POSTGRES_NOTIFY_CHANNEL}, ${payload})`.as("notified"))
    .select(writes.counts().as("guard_counts"))
    .orderBy("inserted.id")
    .execute();
  writes.check(rows[0]?.guard_counts ?? []);
  return rows.map(({ notified: _, guard_counts: __, ...row }) => row);
}

/** The jobs as data-modifying CTEs of the statement built on the returned query creator. */
function withRunJobs(db: Db, jobs: ReadonlyMap<string, StoredRunJob>): QueryCreator<Database> {
  if (jobs.size === 0) return db;
  const entries = [...jobs];
  let creator = db.with("run_job_rows", (qb) =>
    qb
      .insertInto("run_jobs")
      .values(entries.map(([runId, job]) => ({ run_id: runId, job: storedJob(job) })))
      .onConflict((oc) => oc.column("run_id").doUpdateSet((eb) => ({ job: eb.ref("excluded.job") }))),
  ) as unknown as QueryCreator<Database>;
  entries.forEach(([runId, job], i) => {
    creator = creator.with(`run_prompt_${i}`, (qb) =>
      qb
        .updateTable("runs")
        .set({ prompt: job.prompt, prompt_chars: job.prompt.length, pool: job.pool })
        .where("id", "=", runId),
    ) as unknown as QueryCreator<Database>;
  });
  return creator;
}
