import { type Kysely, sql } from "kysely";

/**
 * What a landing run moved, recorded by the run fence in the transaction that guarded the push
 * (run-fence.ts): the landed commit, the branch it landed on, and the landing's place in the
 * order of landings (`landing_seq`, drawn from a sequence right before the push). A landing
 * that lands onto another's commit draws its number after that commit was pushed, so the
 * largest `landing_seq` of a project names the newest landing Postgres knows of, whatever order
 * the fences committed in. The sequence keeps CACHE 1: numbers rise in the order drawn across
 * sessions. A worker reads it with its run's start (the landing branch's
 * expected head, run-contract `expectedBase`) through the partial index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs
    ADD COLUMN landed_sha text,
    ADD COLUMN landed_branch text,
    ADD COLUMN landing_seq bigint`.execute(db);
  await sql`CREATE SEQUENCE run_landing_seq CACHE 1`.execute(db);
  await sql`CREATE INDEX runs_project_landing ON runs (project_id, landing_seq DESC)
    WHERE landing_seq IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS runs_project_landing`.execute(db);
  await sql`DROP SEQUENCE IF EXISTS run_landing_seq`.execute(db);
  await sql`ALTER TABLE runs DROP COLUMN IF EXISTS landed_sha, DROP COLUMN IF EXISTS landed_branch,
    DROP COLUMN IF EXISTS landing_seq`.execute(db);
}
