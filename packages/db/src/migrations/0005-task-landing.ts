import { type Kysely, sql } from "kysely";

/**
 * A task remembers its last failed landing (a conflict with the main branch and its files, or
 * a failed check command) until the next submit, so its next executor starts with the main
 * branch merged in (docs/state-machine.md rule 3).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE tasks ADD COLUMN landing jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE tasks DROP COLUMN landing`.execute(db);
}
