/**
 * Notification subscriptions (migration 0015): where notifications go and which ones. A
 * webhook's signing secrets are kept newest first; a rotation adds a new one and lets the
 * previous one sign beside it until `expires_at`, so a receiver can switch without a gap.
 */
import { type Db, json } from "./connection.ts";
import type { NotificationSubscriptionRow, SubscriptionSecret } from "./database-schema.ts";

export interface NewSubscription {
  readonly id: string;
  readonly projectId: string | null;
  readonly channel: "webhook" | "slack";
  readonly url: string | null;
  readonly slackChannel: string | null;
  readonly eventTypes: readonly string[];
  readonly minSeverity: "info" | "warning" | "critical";
  /** The first signing secret (webhooks). */
  readonly secret: string | null;
  readonly createdBy: string;
}

export async function createSubscription(db: Db, s: NewSubscription): Promise<NotificationSubscriptionRow> {
  const now = new Date();
  const secrets: SubscriptionSecret[] =
    s.secret === null ? [] : [{ secret: s.secret, created_at: now.toISOString(), expires_at: null }];
  return db
    .insertInto("notification_subscriptions")
    .values({
      id: s.id,
      project_id: s.projectId,
      channel: s.channel,
      url: s.url,
      slack_channel: s.slackChannel,
      event_types: [...s.eventTypes],
      min_severity: s.minSeverity,
      secrets: json(secrets),
      created_by: s.createdBy,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function getSubscription(db: Db, id: string): Promise<NotificationSubscriptionRow | undefined> {
  return db.selectFrom("notification_subscriptions").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Subscriptions of one project (with the all-projects ones) or every subscription. */
export async function listSubscriptions(db: Db, projectId?: string): Promise<NotificationSubscriptionRow[]> {
  let q = db.selectFrom("notification_subscriptions").selectAll().orderBy("created_at").orderBy("id");
  if (projectId !== undefined)
    q = q.where((eb) => eb.or([eb("project_id", "=", projectId), eb("project_id", "is", null)]));
  return q.execute();
}

/** Removes a subscription and its deliveries; false when there was none. */
export async function deleteSubscription(db: Db, id: string): Promise<boolean> {
  const deleted = await db.deleteFrom("notification_subscriptions").where("id", "=", id).executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

/**
 * Adds `secret` as the newest signing secret; the secrets still valid keep signing until
 * `overlapMs` from now (at most), expired ones are dropped.
 */
export async function rotateSubscriptionSecret(
  db: Db,
  id: string,
  secret: string,
  overlapMs: number,
  now = new Date(),
): Promise<NotificationSubscriptionRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom("notification_subscriptions")
      .selectAll()
      .where("id", "=", id)
      .forUpdate()
      .executeTakeFirst();
    if (!row) return undefined;
    const until = new Date(now.getTime() + overlapMs).toISOString();
    const kept = activeSecrets(row.secrets, now).map((s) => ({
      ...s,
      expires_at: s.expires_at !== null && s.expires_at < until ? s.expires_at : until,
    }));
    const secrets = [{ secret, created_at: now.toISOString(), expires_at: null }, ...kept];
    return trx
      .updateTable("notification_subscriptions")
      .set({ secrets: json(secrets), updated_at: now })
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** The secrets that sign at `now`: newest first, the expired ones left out. */
export function activeSecrets(
  secrets: readonly SubscriptionSecret[],
  now = new Date(),
): SubscriptionSecret[] {
  const at = now.toISOString();
  return secrets.filter((s) => s.expires_at === null || s.expires_at > at);
}
