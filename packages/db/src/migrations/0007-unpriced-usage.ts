import { type Kysely, sql } from "kysely";

/**
 * Tokens no price covered, per run and per project: usage of a model that neither the price
 * table nor the CLI priced shows as "unpriced" (never as $0), and a dollar budget cannot see it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs ADD COLUMN tokens_unpriced bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE projects ADD COLUMN tokens_unpriced bigint NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE projects DROP COLUMN IF EXISTS tokens_unpriced`.execute(db);
  await sql`ALTER TABLE runs DROP COLUMN IF EXISTS tokens_unpriced`.execute(db);
}
