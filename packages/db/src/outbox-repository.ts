/**
 * The notification outbox (migration 0015). `writeOutbox` runs inside a transition's
 * transaction: one outbox row per notified event and one delivery per matching subscription,
 * so a notification is recorded exactly when its event is. The rest serves the coordinator's
 * delivery jobs and the operator surfaces.
 */
import { type Decision, type DomainEvent, NOTIFICATION_SEVERITIES, notificationsOf } from "@overseer/domain";
import { sql } from "kysely";
import { type Db, json } from "./connection.ts";
import type {
  EventRow,
  NotificationDeliveryRow,
  NotificationOutboxRow,
  NotificationSubscriptionRow,
} from "./database-schema.ts";
import { type OutboxFigure, outboxFigures } from "./outbox-figures.ts";

/** Sent (payload: the project id) by a transaction that created deliveries or asked for a redelivery. */
export const OUTBOX_NOTIFY_CHANNEL = "overseer_outbox";

const SEVERITY_ORDER = sql`ARRAY[${sql.join(NOTIFICATION_SEVERITIES.map((s) => sql.lit(s)))}]::text[]`;

/**
 * Writes the outbox rows of a transition's events (stored as `eventRows`, in the same order as
 * `events`) and fans each out to the enabled subscriptions that match its project, type and
 * severity. Returns how many deliveries were created.
 */
export async function writeOutbox(
  db: Db,
  projectId: string,
  events: readonly DomainEvent[],
  decisions: readonly Decision[],
  eventRows: readonly EventRow[],
): Promise<number> {
  const notifications = notificationsOf(events, decisions);
  if (notifications.length === 0) return 0;
  const rows = await db
    .insertInto("notification_outbox")
    .values(
      notifications.map((n) => {
        const event = eventRows[n.eventIndex];
        if (!event) throw new Error(`outbox: no stored event at index ${n.eventIndex}`);
        return {
          event_id: event.id,
          project_id: projectId,
          task_id: n.taskId,
          type: n.type,
          severity: n.severity,
          data: json(n.data),
        };
      }),
    )
    .returning("id")
    .execute();
  const fanned = await sql`
    INSERT INTO notification_deliveries (outbox_id, subscription_id, project_id)
    SELECT o.id, s.id, o.project_id
    FROM notification_outbox o
    JOIN notification_subscriptions s
      ON s.enabled
     AND (s.project_id IS NULL OR s.project_id = o.project_id)
     AND ((
       (cardinality(s.event_types) = 0 OR o.type = ANY(s.event_types))
       AND array_position(${SEVERITY_ORDER}, o.severity) >= array_position(${SEVERITY_ORDER}, s.min_severity)
     ) OR (
       -- A resolved card's Slack message is updated to say who chose what, whatever the filter.
       s.channel = 'slack' AND o.type = 'decision.resolved' AND EXISTS (
         SELECT 1 FROM notification_deliveries cd
         JOIN notification_outbox co ON co.id = cd.outbox_id
         WHERE cd.subscription_id = s.id AND co.project_id = o.project_id
           AND co.type = 'decision.opened' AND co.data->>'decisionId' = o.data->>'decisionId'
       )
     ))
    WHERE o.id = ANY(${rows.map((r) => r.id)}::bigint[])
    ORDER BY o.id, s.id`.execute(db);
  const created = Number(fanned.numAffectedRows ?? 0n);
  // The coordinators send them once this commits.
  if (created > 0) await sql`SELECT pg_notify(${OUTBOX_NOTIFY_CHANNEL}, ${projectId})`.execute(db);
  return created;
}

export interface StreamHead {
  readonly id: string;
  readonly project_id: string;
  readonly subscription_id: string;
}

/**
 * The deliveries to send now: per (subscription, project) stream, its pending row with the
 * lowest outbox id (order per project), for the given projects or all.
 */
export async function pendingStreamHeads(db: Db, projectIds?: readonly string[]): Promise<StreamHead[]> {
  if (projectIds && projectIds.length === 0) return [];
  const rows = await sql<StreamHead>`
    SELECT DISTINCT ON (project_id, subscription_id) id, project_id, subscription_id
    FROM notification_deliveries
    WHERE status = 'pending'
      ${projectIds ? sql`AND project_id = ANY(${[...projectIds]}::text[])` : sql``}
    ORDER BY project_id, subscription_id, outbox_id`.execute(db);
  return rows.rows.map((r) => ({ ...r, id: String(r.id) }));
}

export interface DeliveryWork {
  readonly delivery: NotificationDeliveryRow;
  readonly outbox: NotificationOutboxRow;
  readonly subscription: NotificationSubscriptionRow;
  /** The pending delivery that must go first in this stream, when it is not this one. */
  readonly waitingFor: string | null;
}

/** A delivery with its outbox row and subscription, or null when it is gone. */
export async function loadDeliveryWork(db: Db, deliveryId: string): Promise<DeliveryWork | null> {
  const delivery = await db
    .selectFrom("notification_deliveries")
    .selectAll()
    .where("id", "=", deliveryId)
    .executeTakeFirst();
  if (!delivery) return null;
  const [outbox, subscription, earlier] = await Promise.all([
    db.selectFrom("notification_outbox").selectAll().where("id", "=", delivery.outbox_id).executeTakeFirst(),
    db
      .selectFrom("notification_subscriptions")
      .selectAll()
      .where("id", "=", delivery.subscription_id)
      .executeTakeFirst(),
    db
      .selectFrom("notification_deliveries")
      .select("id")
      .where("subscription_id", "=", delivery.subscription_id)
      .where("project_id", "=", delivery.project_id)
      .where("status", "=", "pending")
      .where("outbox_id", "<", delivery.outbox_id)
      .orderBy("outbox_id")
      .limit(1)
      .executeTakeFirst(),
  ]);
  if (!outbox || !subscription) return null;
  return { delivery, outbox, subscription, waitingFor: earlier?.id ?? null };
}

/** A Slack message a delivery posted: chat.postMessage's channel and ts. */
export interface SlackMessageRef {
  readonly channel: string;
  readonly ts: string;
}

/**
 * The decision card a `decision.resolved` delivery updates: the latest `decision.opened`
 * notification of the same decision in the same project, before it, sent to the same
 * subscription; with the Slack message its delivery posted (null when that delivery was not
 * posted: dead, or a webhook). Undefined when the subscription never got the card.
 */
export async function decisionCardOf(
  db: Db,
  resolved: Pick<NotificationDeliveryRow, "subscription_id" | "project_id" | "outbox_id">,
  decisionId: string,
): Promise<{ outbox: NotificationOutboxRow; message: SlackMessageRef | null } | undefined> {
  const row = await db
    .selectFrom("notification_deliveries as d")
    .innerJoin("notification_outbox as o", "o.id", "d.outbox_id")
    .selectAll("o")
    .select(["d.slack_channel", "d.slack_ts"])
    .where("d.subscription_id", "=", resolved.subscription_id)
    .where("o.project_id", "=", resolved.project_id)
    .where("o.type", "=", "decision.opened")
    .where(sql<string>`o.data->>'decisionId'`, "=", decisionId)
    .where("o.id", "<", resolved.outbox_id)
    .orderBy("o.id", "desc")
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  const { slack_channel, slack_ts, ...outbox } = row;
  const message =
    slack_channel !== null && slack_ts !== null ? { channel: slack_channel, ts: slack_ts } : null;
  return { outbox, message };
}

/** Counts one attempt of a pending delivery; its attempt number, or null when no longer pending. */
export async function startDeliveryAttempt(db: Db, deliveryId: string): Promise<number | null> {
  const row = await db
    .updateTable("notification_deliveries")
    .set((eb) => ({ attempts: eb("attempts", "+", 1), last_attempt_at: sql`now()` }))
    .where("id", "=", deliveryId)
    .where("status", "=", "pending")
    .returning("attempts")
    .executeTakeFirst();
  return row?.attempts ?? null;
}

/**
 * Records an attempt's outcome: `delivered`, `dead` (failed for good), or still `pending`
 * (retried). Only a pending delivery changes; true when this call changed it.
 */
export async function recordDeliveryOutcome(
  db: Db,
  deliveryId: string,
  outcome: {
    status: "delivered" | "dead" | "pending";
    httpStatus: number | null;
    error: string | null;
    /** The Slack message the attempt posted, kept to update it later. */
    slackMessage?: SlackMessageRef | null | undefined;
  },
): Promise<boolean> {
  const updated = await db
    .updateTable("notification_deliveries")
    .set({
      status: outcome.status,
      ...(outcome.slackMessage
        ? { slack_channel: outcome.slackMessage.channel, slack_ts: outcome.slackMessage.ts }
        : {}),
      last_status: outcome.httpStatus,
      last_error: outcome.error === null ? null : outcome.error.slice(0, 2000),
      ...(outcome.status === "delivered" ? { delivered_at: sql`now()` } : {}),
    })
    .where("id", "=", deliveryId)
    .where("status", "=", "pending")
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/** Sends a delivery again (a dead letter, or a delivered one on request): pending, attempts reset. */
export async function redeliver(db: Db, deliveryId: string): Promise<NotificationDeliveryRow | null> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("notification_deliveries")
      .set({ status: "pending", attempts: 0, last_error: null, last_status: null, delivered_at: null })
      .where("id", "=", deliveryId)
      .returningAll()
      .executeTakeFirst();
    if (row) await sql`SELECT pg_notify(${OUTBOX_NOTIFY_CHANNEL}, ${row.project_id})`.execute(trx);
    return row ?? null;
  });
}

export interface DeliveryListFilter {
  readonly projectId?: string | undefined;
  readonly subscriptionId?: string | undefined;
  readonly status?: "pending" | "delivered" | "dead" | undefined;
  /** Rows with id lower than this (newest first paging). */
  readonly before?: string | undefined;
  readonly limit: number;
}

export interface DeliveryListRow extends NotificationDeliveryRow {
  readonly type: string;
  readonly severity: string;
  readonly task_id: string | null;
  readonly event_id: string;
}

/** Deliveries newest first, with their notification's type and severity. */
export async function listDeliveries(db: Db, filter: DeliveryListFilter): Promise<DeliveryListRow[]> {
  let q = db
    .selectFrom("notification_deliveries as d")
    .innerJoin("notification_outbox as o", "o.id", "d.outbox_id")
    .selectAll("d")
    .select(["o.type", "o.severity", "o.task_id", "o.event_id"])
    .orderBy("d.id", "desc")
    .limit(filter.limit);
  if (filter.projectId) q = q.where("d.project_id", "=", filter.projectId);
  if (filter.subscriptionId) q = q.where("d.subscription_id", "=", filter.subscriptionId);
  if (filter.status) q = q.where("d.status", "=", filter.status);
  if (filter.before) q = q.where("d.id", "<", filter.before);
  return q.execute();
}

/** Deliveries by status (metrics). */
export async function countDeliveriesByStatus(db: Db): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom("notification_deliveries")
    .select(["status", db.fn.countAll<string>().as("n")])
    .groupBy("status")
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/** One delivery with its notification's type and severity, or undefined. */
export async function getDelivery(db: Db, deliveryId: string): Promise<DeliveryListRow | undefined> {
  return db
    .selectFrom("notification_deliveries as d")
    .innerJoin("notification_outbox as o", "o.id", "d.outbox_id")
    .selectAll("d")
    .select(["o.type", "o.severity", "o.task_id", "o.event_id"])
    .where("d.id", "=", deliveryId)
    .executeTakeFirst();
}

/**
 * Sends a dead letter again, idempotently: only a `dead` delivery becomes pending (attempts
 * reset, same `webhook-id`); a pending or delivered one is left as it is. `redelivered` says
 * whether this call changed it; `row` is undefined when there is no such delivery.
 */
export async function redeliverDeadLetter(
  db: Db,
  deliveryId: string,
): Promise<{ row: DeliveryListRow | undefined; redelivered: boolean }> {
  const changed = await db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("notification_deliveries")
      .set({ status: "pending", attempts: 0, last_error: null, last_status: null, delivered_at: null })
      .where("id", "=", deliveryId)
      .where("status", "=", "dead")
      .returning("project_id")
      .executeTakeFirst();
    if (row) await sql`SELECT pg_notify(${OUTBOX_NOTIFY_CHANNEL}, ${row.project_id})`.execute(trx);
    return row !== undefined;
  });
  return { row: await getDelivery(db, deliveryId), redelivered: changed };
}

/** Per project and status: how many deliveries, and how many attempts they made (metrics). */
export async function deliveryFigures(db: Db): Promise<OutboxFigure[]> {
  return outboxFigures(db, "notification_deliveries");
}
