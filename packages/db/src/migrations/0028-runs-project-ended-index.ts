import { type Kysely, sql } from "kysely";

/**
 * The fleet overview reads each changed project's runs that ended in the last hour
 * (fleet-queries.ts `listFleetProjects`). With only `runs_ended_idx` (ended_at, every project)
 * and `runs_task_idx` (project_id first), Postgres ANDed the project's every run with every
 * project's runs of the hour, so one project's read grew with the fleet: at 1,000 projects with
 * 520 runs each, 21,000 of them in the hour, a read of 10 changed projects took 15–20 ms and a
 * whole read 1.4–1.6 s; through this index 1.8 ms and 135 ms (EXPLAIN ANALYZE, idle machine).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX runs_project_ended_idx ON runs (project_id, ended_at)
    WHERE ended_at IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS runs_project_ended_idx`.execute(db);
}
