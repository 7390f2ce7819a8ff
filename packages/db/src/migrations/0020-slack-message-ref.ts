import { type Kysely, sql } from "kysely";

/**
 * Where a Slack delivery's message is (README "Intake and notifications", Slack): the channel
 * and `ts` chat.postMessage answered, stored on the delivery that posted it. A decision card's
 * message is found by them when its decision is resolved, and updated with chat.update to say
 * who chose what. Null for webhooks and for Slack deliveries not (yet) posted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE notification_deliveries
    ADD COLUMN IF NOT EXISTS slack_channel text,
    ADD COLUMN IF NOT EXISTS slack_ts text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE notification_deliveries DROP COLUMN IF EXISTS slack_channel, DROP COLUMN IF EXISTS slack_ts`.execute(
    db,
  );
}
