import { randomBytes } from "node:crypto";
import { DEFAULT_ROTATION_OVERLAP_SECONDS, type Delivery, type Subscription } from "@overseer/api-contract";
import {
  activeSecrets,
  createSubscription as createSubscriptionRow,
  type DeliveryListRow,
  deleteSubscription,
  getSubscription,
  listDeliveries as listDeliveryRows,
  listSubscriptions as listSubscriptionRows,
  type NotificationSubscriptionRow,
  redeliverDeadLetter,
  rotateSubscriptionSecret,
} from "@overseer/db";
import { newWebhookSecret, postWebhook, webhookTestPayload } from "@overseer/notify";
import { actorOf } from "../../gateway-env.ts";
import { ApiError } from "../../http/api-error.ts";
import { iso, isoOrNull } from "../../views/resource-views.ts";
import { existingProject, type GatewayHandler, newestFirstPage, type RouteContext } from "../route-kit.ts";
import type {
  createSubscriptionRoute,
  listDeliveriesRoute,
  listSubscriptionsRoute,
  redeliverDeliveryRoute,
  removeSubscriptionRoute,
  rotateSubscriptionSecretRoute,
  testSubscriptionRoute,
} from "./definitions.ts";

/** How long the test message may take (the coordinator's own sends use OVERSEER_NOTIFY_TIMEOUT_MS). */
const TEST_TIMEOUT_MS = 10_000;

/** A subscription as the API shows it: the secrets' dates, never their values. */
export function subscriptionView(row: NotificationSubscriptionRow, now = new Date()): Subscription {
  return {
    id: row.id,
    project_id: row.project_id,
    channel: row.channel,
    url: row.url,
    slack_channel: row.slack_channel,
    event_types: [...row.event_types],
    min_severity: row.min_severity,
    enabled: row.enabled,
    secrets: activeSecrets(row.secrets, now).map((s) => ({
      created_at: s.created_at,
      expires_at: s.expires_at,
    })),
    created_by: row.created_by,
    created_at: iso(row.created_at),
  };
}

export function deliveryView(row: DeliveryListRow): Delivery {
  return {
    id: String(row.id),
    webhook_id: row.webhook_id,
    subscription_id: row.subscription_id,
    project_id: row.project_id,
    task_id: row.task_id,
    event_id: String(row.event_id),
    type: row.type,
    severity: row.severity,
    status: row.status,
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    last_attempt_at: isoOrNull(row.last_attempt_at),
    delivered_at: isoOrNull(row.delivered_at),
    created_at: iso(row.created_at),
  };
}

function subscriptionNotFound(id: string): ApiError {
  return new ApiError(
    404,
    "not_found",
    `Subscription ${id} does not exist; list them with GET /api/v1/notifications/subscriptions (overseer notify list).`,
    { subscription_id: id },
  );
}

async function existingSubscription(ctx: RouteContext, id: string): Promise<NotificationSubscriptionRow> {
  const row = await getSubscription(ctx.deps.db, id);
  if (!row) throw subscriptionNotFound(id);
  return row;
}

export function listSubscriptions({ deps }: RouteContext): GatewayHandler<typeof listSubscriptionsRoute> {
  return async (c) => {
    const { project_id } = c.req.valid("query");
    const rows = await listSubscriptionRows(deps.db, project_id);
    return c.json({ subscriptions: rows.map((r) => subscriptionView(r)) }, 200);
  };
}

export function createSubscription({ deps }: RouteContext): GatewayHandler<typeof createSubscriptionRoute> {
  return async (c) => {
    const body = c.req.valid("json");
    const projectId = body.project_id ?? null;
    if (projectId !== null) await existingProject(deps.db, projectId);
    const slackChannel = body.slack_channel ?? null;
    // A webhook is signed with its own secret; Slack posts are the bot token's (coordinator host).
    const secret = slackChannel === null ? newWebhookSecret() : null;
    const row = await createSubscriptionRow(deps.db, {
      id: `sub_${randomBytes(8).toString("hex")}`,
      projectId,
      channel: slackChannel === null ? "webhook" : "slack",
      url: body.url ?? null,
      slackChannel,
      eventTypes: [...new Set(body.event_types ?? [])],
      minSeverity: body.min_severity ?? "info",
      secret,
      createdBy: actorOf(c.get("token")),
    });
    return c.json({ subscription: subscriptionView(row), secret }, 201);
  };
}

export function removeSubscription({ deps }: RouteContext): GatewayHandler<typeof removeSubscriptionRoute> {
  return async (c) => {
    const { subscription_id } = c.req.valid("param");
    if (!(await deleteSubscription(deps.db, subscription_id))) throw subscriptionNotFound(subscription_id);
    return c.json({ removed: true as const, id: subscription_id }, 200);
  };
}

/** One signed POST of an `overseer.test` message, answered with the receiver's status. */
export function testSubscription(ctx: RouteContext): GatewayHandler<typeof testSubscriptionRoute> {
  return async (c) => {
    const { subscription_id } = c.req.valid("param");
    const row = await existingSubscription(ctx, subscription_id);
    if (row.channel !== "webhook" || row.url === null)
      throw new ApiError(
        409,
        "not_a_webhook",
        `Subscription ${row.id} is not a webhook; only webhooks can be tested.`,
      );
    const webhookId = `msg_test_${randomBytes(12).toString("hex")}`;
    const outcome = await postWebhook({
      url: row.url,
      secrets: activeSecrets(row.secrets).map((s) => s.secret),
      webhookId,
      body: JSON.stringify(webhookTestPayload(row.id, row.project_id)),
      timeoutMs: TEST_TIMEOUT_MS,
    });
    return c.json(
      { ok: outcome.ok, status: outcome.status, error: outcome.error, webhook_id: webhookId },
      200,
    );
  };
}

export function rotateSecret(ctx: RouteContext): GatewayHandler<typeof rotateSubscriptionSecretRoute> {
  return async (c) => {
    const { subscription_id } = c.req.valid("param");
    const body = c.req.valid("json") ?? {};
    const overlapSeconds = body.overlap_seconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS;
    const secret = newWebhookSecret();
    const row = await rotateSubscriptionSecret(ctx.deps.db, subscription_id, secret, overlapSeconds * 1000);
    if (!row) throw subscriptionNotFound(subscription_id);
    // The previous secrets still signing (none after a rotation without overlap), latest end.
    const previous = activeSecrets(row.secrets.slice(1)).map((s) => s.expires_at ?? "");
    const previousExpireAt = previous.sort().at(-1) || null;
    return c.json({ subscription: subscriptionView(row), secret, previous_expire_at: previousExpireAt }, 200);
  };
}

export function listDeliveries({ deps }: RouteContext): GatewayHandler<typeof listDeliveriesRoute> {
  return async (c) => {
    const q = c.req.valid("query");
    const rows = await listDeliveryRows(deps.db, {
      projectId: q.project_id,
      subscriptionId: q.subscription_id,
      status: q.status,
      before: q.before,
      limit: q.limit + 1,
    });
    const { page, nextBefore } = newestFirstPage(rows, q.limit);
    return c.json({ deliveries: page.map(deliveryView), next_before: nextBefore }, 200);
  };
}

export function redeliverDelivery({ deps }: RouteContext): GatewayHandler<typeof redeliverDeliveryRoute> {
  return async (c) => {
    const { delivery_id } = c.req.valid("param");
    const { row, redelivered } = await redeliverDeadLetter(deps.db, delivery_id);
    if (!row)
      throw new ApiError(
        404,
        "not_found",
        `Delivery ${delivery_id} does not exist; list them with GET /api/v1/notifications/deliveries (overseer notify deliveries).`,
        { delivery_id },
      );
    return c.json({ delivery: deliveryView(row), redelivered }, 200);
  };
}
