import { type Kysely, sql } from "kysely";

/**
 * A live run's job (the rendered prompt, the resolved config, secrets among it), kept in
 * Postgres instead of the run queue: the queue carries only the run's ids (run-contract
 * `RunRef`), so Redis holds a few hundred bytes per queued or running run whatever the job's
 * size, and a worker reads the job with its run fence read. Written before the run is queued,
 * deleted by the update that ends the run (and with the run). No API reads it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE run_jobs (
    run_id text PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    job jsonb NOT NULL
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS run_jobs`.execute(db);
}
