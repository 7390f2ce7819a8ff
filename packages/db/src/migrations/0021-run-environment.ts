import { type Kysely, sql } from "kysely";

/**
 * The run environment each run used (run-contract `RunResult.environment`): the repository's
 * `.overseer/environment.yml` it read (path and blob), the image and which side named it, the
 * number of setup commands and the agent CLI installed. Null: a run that ended before its
 * checkout, without a worker's result, or older than this migration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs ADD COLUMN environment jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs DROP COLUMN IF EXISTS environment`.execute(db);
}
