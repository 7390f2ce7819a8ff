import { type Kysely, sql } from "kysely";

/**
 * Each run's transcript (docs/transcripts.md), beside its raw output: the entries the worker
 * parsed from the agent's output, bounded by OVERSEER_MAX_TRANSCRIPT_BYTES (`truncated` when the
 * oldest were dropped), stored with the run's result in the transaction that applies it. A table
 * of its own so that reading runs never loads transcripts; a task's transcript is read by
 * (project, task).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE run_transcripts (
    run_id text PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    task_id text NOT NULL,
    agent text,
    entries jsonb NOT NULL,
    truncated boolean NOT NULL DEFAULT false,
    bytes integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`.execute(db);
  await sql`CREATE INDEX run_transcripts_task ON run_transcripts (project_id, task_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS run_transcripts`.execute(db);
}
