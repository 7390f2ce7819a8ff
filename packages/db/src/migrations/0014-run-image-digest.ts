import { type Kysely, sql } from "kysely";

/**
 * The digest of the image each run ran on (the project's `sandbox.image`, resolved when the run
 * started; run-contract `RunResult.imageDigest`). Null: the worker's own system, a run that ended
 * without a worker's result, or a run older than this migration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs ADD COLUMN image_digest text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs DROP COLUMN IF EXISTS image_digest`.execute(db);
}
