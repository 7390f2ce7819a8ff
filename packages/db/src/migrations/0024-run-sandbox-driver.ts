import { type Kysely, sql } from "kysely";

/**
 * The sandbox driver each run ran under (`bwrap`, `gvisor` or `none`; run-contract
 * `RunResult.sandboxDriver`), beside the image digest it ran on. Null: a run refused before its
 * sandbox was chosen, one that ended without a worker's result, or one older than this migration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs ADD COLUMN sandbox_driver text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs DROP COLUMN IF EXISTS sandbox_driver`.execute(db);
}
