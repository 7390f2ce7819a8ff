import { type Kysely, sql } from "kysely";

/**
 * Two-way status, tracker side (README "Intake and notifications"): `tracker_updates` is the
 * outbox of what Overseer writes back to an intake item's issue (a comment, state and labels per
 * the source's status map, a close on merge). A row is written in the transaction that records
 * its event (a task from an intake item started, opened a PR, is done or blocked, its PR merged);
 * `key` (source, issue, moment, occurrence) makes it once per item and status, and is the marker
 * of its comment, so a retried write finds the first instead of posting twice. Delivered one at
 * a time per issue in id order, with retries; `dead` after the last attempt (redeliverable).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE tracker_updates (
    id bigserial PRIMARY KEY,
    key text NOT NULL UNIQUE,
    source_id text NOT NULL REFERENCES intake_sources(id) ON DELETE CASCADE,
    issue_id text NOT NULL,
    project_id text NOT NULL,
    task_id text NOT NULL,
    moment text NOT NULL CHECK (moment IN ('started', 'pr_opened', 'done', 'blocked', 'merged')),
    occurrence text NOT NULL,
    event_id bigint REFERENCES events(id) ON DELETE CASCADE,
    data jsonb NOT NULL DEFAULT '{}',
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    last_attempt_at timestamptz,
    delivered_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  )`.execute(db);
  await sql`CREATE INDEX tracker_updates_pending
    ON tracker_updates (source_id, issue_id, id) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX tracker_updates_recent ON tracker_updates (status, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS tracker_updates`.execute(db);
}
