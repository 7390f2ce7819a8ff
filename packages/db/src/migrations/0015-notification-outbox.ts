import { type Kysely, sql } from "kysely";

/**
 * The notification outbox (README "Intake and notifications"):
 * - `notification_subscriptions`: where notifications go (a Standard Webhooks URL or a Slack
 *   channel), for one project or all (`project_id` null), filtered by type and least severity;
 *   a webhook's signing secrets, newest first, each until its `expires_at` (rotation).
 * - `notification_outbox`: one row per notified event, written in the transaction that appends
 *   the event (transition-repository.ts), so a notification exists exactly when its fact does.
 * - `notification_deliveries`: one row per (outbox row, matching subscription), fanned out in
 *   that same transaction; `webhook_id` is the idempotency key a receiver sees on every attempt.
 *   Delivered one at a time per (subscription, project) in outbox order: the pending row with the
 *   lowest outbox id of its stream is the only one the coordinator sends.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE notification_subscriptions (
    id text PRIMARY KEY,
    project_id text REFERENCES projects(id) ON DELETE CASCADE,
    channel text NOT NULL CHECK (channel IN ('webhook', 'slack')),
    url text,
    slack_channel text,
    event_types text[] NOT NULL DEFAULT '{}',
    min_severity text NOT NULL DEFAULT 'info' CHECK (min_severity IN ('info', 'warning', 'critical')),
    secrets jsonb NOT NULL DEFAULT '[]',
    enabled boolean NOT NULL DEFAULT true,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((channel = 'webhook' AND url IS NOT NULL) OR (channel = 'slack' AND slack_channel IS NOT NULL))
  )`.execute(db);
  await sql`CREATE TABLE notification_outbox (
    id bigserial PRIMARY KEY,
    event_id bigint NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    task_id text,
    type text NOT NULL,
    severity text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`.execute(db);
  await sql`CREATE INDEX notification_outbox_project ON notification_outbox (project_id, id)`.execute(db);
  await sql`CREATE TABLE notification_deliveries (
    id bigserial PRIMARY KEY,
    webhook_id text NOT NULL UNIQUE DEFAULT ('msg_' || replace(gen_random_uuid()::text, '-', '')),
    outbox_id bigint NOT NULL REFERENCES notification_outbox(id) ON DELETE CASCADE,
    subscription_id text NOT NULL REFERENCES notification_subscriptions(id) ON DELETE CASCADE,
    project_id text NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    last_status integer,
    last_attempt_at timestamptz,
    delivered_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (outbox_id, subscription_id)
  )`.execute(db);
  await sql`CREATE INDEX notification_deliveries_pending
    ON notification_deliveries (project_id, subscription_id, outbox_id) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX notification_deliveries_recent ON notification_deliveries (status, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS notification_deliveries`.execute(db);
  await sql`DROP TABLE IF EXISTS notification_outbox`.execute(db);
  await sql`DROP TABLE IF EXISTS notification_subscriptions`.execute(db);
}
