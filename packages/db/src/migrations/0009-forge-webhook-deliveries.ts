import { type Kysely, sql } from "kysely";

/**
 * Every webhook delivery a forge sent, stored once by (forge, delivery id) as it arrived and
 * applied later by the coordinator (`applied_at` set in the transaction that applies it). A
 * redelivery of the same id changes nothing; the index serves "what is left to apply".
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE forge_webhook_deliveries (
    forge text NOT NULL CHECK (forge IN ('github', 'gitlab', 'gitea')),
    delivery_id text NOT NULL,
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    event text NOT NULL,
    action text,
    payload jsonb NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    applied_at timestamptz,
    PRIMARY KEY (forge, delivery_id)
  )`.execute(db);
  await sql`CREATE INDEX forge_webhook_deliveries_unapplied
    ON forge_webhook_deliveries (project_id, received_at) WHERE applied_at IS NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS forge_webhook_deliveries`.execute(db);
}
