import { type Kysely, sql } from "kysely";

/**
 * Of a task's forge API calls (`pull_requests.api_calls`), those a conditional read got back as
 * 304 Not Modified: GitHub does not charge them to the rate limit, so the metrics report them
 * apart (`overseer_forge_api_not_modified_total`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE pull_requests ADD COLUMN api_not_modified integer NOT NULL DEFAULT 0
    CHECK (api_not_modified >= 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE pull_requests DROP COLUMN IF EXISTS api_not_modified`.execute(db);
}
