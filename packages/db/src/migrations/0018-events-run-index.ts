import { type Kysely, sql } from "kysely";

/**
 * A run's events by its id: the run page, its transcript events and the pull request body's
 * words of each run (`taskRunLines`) read them. With only `(project_id, id)` each of those
 * reads scanned every event of the project, a cost that grew with the project's history
 * instead of with the run. Partial: project-level events carry no run.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS events_run_idx ON events (run_id, id) WHERE run_id IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS events_run_idx`.execute(db);
}
