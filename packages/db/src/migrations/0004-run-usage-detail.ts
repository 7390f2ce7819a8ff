import { type Kysely, sql } from "kysely";

/**
 * Usage detail per run: the input tokens served from the provider's cache, and where the usage
 * was read (`overseer-agent`, or the agent CLI's stream or session file), which also marks the
 * run's usage as recorded so a redelivered result never counts it twice. Projects sum cached
 * tokens beside their other totals.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs ADD COLUMN tokens_cached bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE runs ADD COLUMN usage_source text`.execute(db);
  await sql`ALTER TABLE projects ADD COLUMN tokens_cached bigint NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE projects DROP COLUMN IF EXISTS tokens_cached`.execute(db);
  await sql`ALTER TABLE runs DROP COLUMN IF EXISTS usage_source`.execute(db);
  await sql`ALTER TABLE runs DROP COLUMN IF EXISTS tokens_cached`.execute(db);
}
