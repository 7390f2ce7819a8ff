import { type Kysely, sql } from "kysely";

/**
 * A lease's owner becomes part of a key (a unique index on project_id, owner), so that the
 * row locks tell a renewal from a takeover: a claim checks its lease with FOR KEY SHARE, which
 * an owner's renewal (its expiry only: a no-key update) never waits on or conflicts with, while
 * another replica taking the lease over (a new owner: a key update) or a release (a delete)
 * still waits for the claim to commit (docs/state-machine.md rule 11).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE UNIQUE INDEX leases_project_owner ON leases (project_id, owner)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS leases_project_owner`.execute(db);
}
