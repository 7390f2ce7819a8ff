import { type Kysely, sql } from "kysely";

/**
 * Each run's phase timeline (run-contract run-phases.ts): `[{ name, startedAt, durationMs }]`,
 * back to back from the run's creation to the application of its result, stored with the result
 * in the transaction that applies it. Empty for a run that ended without a worker's result
 * (cancelled, misconfigured, lost) and for runs older than this migration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs ADD COLUMN phases jsonb NOT NULL DEFAULT '[]'::jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs DROP COLUMN IF EXISTS phases`.execute(db);
}
