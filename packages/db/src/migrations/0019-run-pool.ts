import { type Kysely, sql } from "kysely";

/**
 * The worker pool each run needs (the project's runner config `pool`, run-contract `RunJob.pool`),
 * written with the run's prompt when its job is queued: the coordinator's reconcile looks the
 * run's job up in that pool's queue. Runs older than this migration were all in `default`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs ADD COLUMN pool text NOT NULL DEFAULT 'default'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs DROP COLUMN IF EXISTS pool`.execute(db);
}
