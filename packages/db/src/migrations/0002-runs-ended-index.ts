import { type Kysely, sql } from "kysely";

/**
 * Fleet throughput and run charts read the runs that ended in a recent window across every
 * project; without this index each read scans the whole runs table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX runs_ended_idx ON runs (ended_at) WHERE ended_at IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS runs_ended_idx`.execute(db);
}
