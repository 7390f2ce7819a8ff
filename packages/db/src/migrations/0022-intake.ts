import { type Kysely, sql } from "kysely";

/**
 * Tracker intake (README "Intake and notifications"):
 * - `intake_sources`: what a project subscribes to in one tracker (kind, query, task | mission,
 *   status map) and where its credentials are: the NAME of an environment variable on the
 *   coordinator/gateway host (`token_env`, `webhook_secret_env`), never the secret itself.
 *   `polled_at` is where the next poll resumes (`since`).
 * - `intake_items`: one row per (source, issue) intake has seen, linking to the task it became;
 *   `comment_cursor` is the last tracker comment read, so none is read twice.
 * - `intake_webhook_deliveries`: every verified delivery once, by (source, delivery id), so a
 *   redelivery is recognised and asks for nothing new.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE intake_sources (
    id text PRIMARY KEY,
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('github', 'gitlab', 'linear', 'jira')),
    base_url text,
    query jsonb NOT NULL,
    config jsonb NOT NULL DEFAULT '{}',
    token_env text NOT NULL,
    webhook_secret_env text,
    enabled boolean NOT NULL DEFAULT true,
    polled_at timestamptz,
    last_error text,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`.execute(db);
  await sql`CREATE INDEX intake_sources_project ON intake_sources (project_id)`.execute(db);
  await sql`CREATE TABLE intake_items (
    source_id text NOT NULL REFERENCES intake_sources(id) ON DELETE CASCADE,
    issue_id text NOT NULL,
    issue_key text NOT NULL,
    project_id text NOT NULL,
    task_id text,
    comment_cursor text,
    cancelled_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, issue_id)
  )`.execute(db);
  await sql`CREATE INDEX intake_items_task ON intake_items (project_id, task_id)`.execute(db);
  await sql`CREATE TABLE intake_webhook_deliveries (
    source_id text NOT NULL REFERENCES intake_sources(id) ON DELETE CASCADE,
    delivery_id text NOT NULL,
    issue_id text NOT NULL,
    what text NOT NULL CHECK (what IN ('issue', 'comment')),
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, delivery_id)
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS intake_webhook_deliveries`.execute(db);
  await sql`DROP TABLE IF EXISTS intake_items`.execute(db);
  await sql`DROP TABLE IF EXISTS intake_sources`.execute(db);
}
