/**
 * The coordinator's notification delivery (README "Intake and notifications"): the outbox's
 * deliveries sent through the row delivery pump (../row-delivery-pump.ts):
 *
 *   transition ──(same transaction)──► outbox row + one delivery per matching subscription
 *        └── NOTIFY overseer_outbox ──► pump: the head of each (subscription, project) stream
 *                                        ──► `notify` job ──► signed POST / Slack message
 *
 * A stream is one subscription's deliveries of one project, so a receiver sees a project's
 * notifications in the order they happened. A replica killed mid-POST leaves the delivery
 * pending and it is sent again with the same `webhook-id`, the receiver's idempotency key.
 */
import {
  activeSecrets,
  type Db,
  type DeliveryWork,
  loadDeliveryWork,
  OUTBOX_NOTIFY_CHANNEL,
  pendingStreamHeads,
  recordDeliveryOutcome,
  startDeliveryAttempt,
} from "@overseer/db";
import { postWebhook, type SlackOutcome, webhookPayloadOf } from "@overseer/notify";
import { NOTIFY_QUEUE, type NotifyQueue, notifyJobSchema } from "@overseer/queue";
import type { ResolvedCoordinatorOptions } from "../coordinator-options.ts";
import { type RowDelivery, RowDeliveryPump, type RowDeliveryPumpDeps } from "../row-delivery-pump.ts";
import { sendSlackDelivery } from "./slack-delivery.ts";

export interface NotificationRunnerDeps extends Omit<RowDeliveryPumpDeps, "queue"> {
  readonly db: Db;
  readonly queue: NotifyQueue;
}

/**
 * The coordinator's options it reads: `notifyConcurrency` deliveries in parallel, `notifyAttempts`
 * before a dead letter (the queue's job attempts too), `notifyTimeoutMs` per request, a sweep every
 * `reconcileIntervalMs`, links to `dashboardUrl`.
 */
export type NotificationRunnerOptions = Pick<
  ResolvedCoordinatorOptions,
  | "prefix"
  | "notifyConcurrency"
  | "notifyAttempts"
  | "notifyTimeoutMs"
  | "reconcileIntervalMs"
  | "dashboardUrl"
  | "slackBotToken"
  | "slackApiUrl"
>;

export class NotificationRunner extends RowDeliveryPump<DeliveryWork, SlackOutcome> {
  constructor(deps: NotificationRunnerDeps, options: NotificationRunnerOptions) {
    super(deps, options, notificationDelivery(deps.db, options));
  }
}

/** Notification deliveries as rows of the pump. */
function notificationDelivery(
  db: Db,
  options: NotificationRunnerOptions,
): RowDelivery<DeliveryWork, SlackOutcome> {
  return {
    what: "notification",
    queueName: NOTIFY_QUEUE,
    channel: OUTBOX_NOTIFY_CHANNEL,
    rowIdOf: (data) => notifyJobSchema.parse(data).deliveryId,
    heads: async (projectIds) => (await pendingStreamHeads(db, projectIds)).map((head) => head.id),
    load: async (id) => {
      const work = await loadDeliveryWork(db, id);
      if (work === null) return null;
      const { delivery } = work;
      return {
        pending: delivery.status === "pending",
        projectId: delivery.project_id,
        waitingFor: work.waitingFor,
        work,
      };
    },
    startAttempt: (id) => startDeliveryAttempt(db, id),
    send: (work) => sendNotification(db, work, options),
    record: (id, status, outcome) =>
      recordDeliveryOutcome(db, id, {
        status,
        httpStatus: outcome.status,
        error: outcome.ok ? null : outcome.error,
        ...(outcome.ok ? { slackMessage: outcome.message } : {}),
      }),
    logFields: (work) => ({
      delivery: work.delivery.id,
      webhookId: work.delivery.webhook_id,
      subscription: work.subscription.id,
      projectId: work.delivery.project_id,
    }),
  };
}

/** One attempt: a Slack message, or a signed POST (Standard Webhooks). */
async function sendNotification(
  db: Db,
  work: DeliveryWork,
  options: NotificationRunnerOptions,
): Promise<SlackOutcome> {
  const { subscription, outbox, delivery } = work;
  if (subscription.channel === "slack" && subscription.slack_channel !== null) {
    return sendSlackDelivery(db, work, subscription.slack_channel, {
      token: options.slackBotToken,
      apiUrl: options.slackApiUrl,
      timeoutMs: options.notifyTimeoutMs,
      dashboardUrl: options.dashboardUrl,
    });
  }
  if (subscription.channel !== "webhook" || subscription.url === null)
    return {
      ok: false,
      status: null,
      error: `channel ${subscription.channel} cannot be sent yet`,
      message: null,
    };
  const outcome = await postWebhook({
    url: subscription.url,
    secrets: activeSecrets(subscription.secrets).map((s) => s.secret),
    webhookId: delivery.webhook_id,
    body: JSON.stringify(webhookPayloadOf(outbox, options.dashboardUrl)),
    timeoutMs: options.notifyTimeoutMs,
  });
  return { ...outcome, message: null };
}
