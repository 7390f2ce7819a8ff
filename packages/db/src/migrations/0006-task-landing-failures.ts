import { type Kysely, sql } from "kysely";

/**
 * A task counts its failed landings in a row, so a landing that keeps failing (a check that
 * never passes once merged) waits for an operator after the project's `attempts` instead of
 * cycling through executors (docs/state-machine.md rule 3).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE tasks ADD COLUMN landing_failures integer NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE tasks DROP COLUMN landing_failures`.execute(db);
}
