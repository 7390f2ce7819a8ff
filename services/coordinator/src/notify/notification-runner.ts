/**
 * The coordinator's notification delivery (README "Intake and notifications"). The outbox in
 * Postgres says what is to send; this turns it into BullMQ jobs and sends them:
 *
 *   transition ──(same transaction)──► outbox row + one delivery per matching subscription
 *        └── NOTIFY overseer_outbox ──► pump: the head of each (subscription, project) stream
 *                                        ──► `notify` job ──► signed POST / Slack message
 *
 * One delivery in flight per stream, in outbox order, so a receiver sees a project's
 * notifications in the order they happened; a failed attempt is retried by BullMQ with
 * exponential backoff while the stream waits behind it, and after `attempts` it is a dead letter
 * (the stream moves on; an operator can redeliver it). Every replica pumps and sends: job ids
 * come from delivery ids, so asking twice adds one job. A periodic sweep re-asks for every stream
 * head, which rebuilds the queue after a Redis flush or a lost NOTIFY. Delivery is at least once:
 * a replica killed mid-POST leaves the delivery pending and it is sent again with the same
 * `webhook-id`, the receiver's idempotency key.
 */
import {
  activeSecrets,
  type Db,
  type DeliveryWork,
  loadDeliveryWork,
  type NotificationListener,
  OUTBOX_NOTIFY_CHANNEL,
  pendingStreamHeads,
  recordDeliveryOutcome,
  startDeliveryAttempt,
} from "@overseer/db";
import { postWebhook, type SlackOutcome, webhookPayloadOf } from "@overseer/notify";
import { NOTIFY_QUEUE, type NotifyQueue, notifyJobSchema, queueKeyPrefix, type Redis } from "@overseer/queue";
import type { Logger } from "@overseer/runtime";
import { Worker } from "bullmq";
import type { ResolvedCoordinatorOptions } from "../coordinator-options.ts";
import { sendSlackDelivery } from "./slack-delivery.ts";

export interface NotificationRunnerDeps {
  readonly db: Db;
  readonly queue: NotifyQueue;
  readonly notifications: NotificationListener;
  readonly workerConnection: Redis;
  readonly logger: Logger;
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

export class NotificationRunner {
  readonly #deps: NotificationRunnerDeps;
  readonly #options: NotificationRunnerOptions;
  #worker: Worker | null = null;
  #sweepTimer: NodeJS.Timeout | null = null;
  #unlisten: (() => Promise<void>) | null = null;
  /** Projects whose streams to pump next; null entry: all. */
  readonly #dirty = new Set<string | null>();
  #pumping: Promise<void> | null = null;
  #stopped = false;

  constructor(deps: NotificationRunnerDeps, options: NotificationRunnerOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  async start(): Promise<void> {
    const log = this.#deps.logger;
    this.#worker = new Worker(NOTIFY_QUEUE, (job) => this.process(job.data), {
      connection: this.#deps.workerConnection,
      prefix: queueKeyPrefix(this.#options.prefix),
      concurrency: this.#options.notifyConcurrency,
      autorun: true,
    });
    this.#worker.on("error", (error) => log.error({ err: error }, "notify worker error"));
    this.#worker.on("failed", (job, error) =>
      log.warn({ job: job?.id, reason: error.message }, "notification attempt failed; retried with backoff"),
    );
    const listener = await this.#deps.notifications.listen(
      OUTBOX_NOTIFY_CHANNEL,
      (projectId) => this.pump(projectId),
      () => this.pump(null),
    );
    this.#unlisten = () => listener.unlisten();
    this.#sweepTimer = setInterval(() => this.pump(null), this.#options.reconcileIntervalMs);
    this.pump(null);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#sweepTimer) clearInterval(this.#sweepTimer);
    await this.#unlisten?.().catch(() => undefined);
    await this.#pumping;
    await this.#worker?.close();
    this.#worker = null;
  }

  /** Asks for the head delivery of each stream of `projectId` (null: of every project). */
  pump(projectId: string | null): void {
    if (this.#stopped) return;
    this.#dirty.add(projectId);
    if (this.#pumping) return;
    this.#pumping = this.#drain().finally(() => {
      this.#pumping = null;
    });
  }

  async #drain(): Promise<void> {
    while (this.#dirty.size > 0 && !this.#stopped) {
      const all = this.#dirty.has(null);
      const projects = [...this.#dirty].filter((p): p is string => p !== null);
      this.#dirty.clear();
      try {
        const heads = await pendingStreamHeads(this.#deps.db, all ? undefined : projects);
        for (const head of heads) await this.#deps.queue.add(head.id);
      } catch (error) {
        this.#deps.logger.warn({ err: error }, "notification pump failed; the next sweep asks again");
      }
    }
  }

  /** One attempt of one delivery; throws to have BullMQ retry it with backoff. */
  async process(data: unknown): Promise<void> {
    const { deliveryId } = notifyJobSchema.parse(data);
    const work = await loadDeliveryWork(this.#deps.db, deliveryId);
    // Delivered, dead or removed since it was asked for: nothing to do (a redelivered job).
    if (work?.delivery.status !== "pending") return;
    if (work.waitingFor !== null) {
      // An older delivery of the stream goes first; this one is asked for again after it.
      await this.#deps.queue.add(work.waitingFor);
      return;
    }
    const attempt = await startDeliveryAttempt(this.#deps.db, deliveryId);
    if (attempt === null) return;
    const outcome = await this.send(work);
    const log = this.#deps.logger.child({
      delivery: deliveryId,
      webhookId: work.delivery.webhook_id,
      subscription: work.subscription.id,
      projectId: work.delivery.project_id,
      attempt,
    });
    if (outcome.ok) {
      await recordDeliveryOutcome(this.#deps.db, deliveryId, {
        status: "delivered",
        httpStatus: outcome.status,
        error: null,
        slackMessage: outcome.message,
      });
      log.debug("notification delivered");
      this.pump(work.delivery.project_id);
      return;
    }
    const dead = attempt >= this.#options.notifyAttempts;
    await recordDeliveryOutcome(this.#deps.db, deliveryId, {
      status: dead ? "dead" : "pending",
      httpStatus: outcome.status,
      error: outcome.error,
    });
    if (dead) {
      log.warn({ reason: outcome.error }, "notification is a dead letter after its last attempt");
      this.pump(work.delivery.project_id);
      return;
    }
    throw new Error(outcome.error ?? "delivery failed");
  }

  private async send(work: DeliveryWork): Promise<SlackOutcome> {
    const { subscription, outbox, delivery } = work;
    if (subscription.channel === "slack" && subscription.slack_channel !== null) {
      return sendSlackDelivery(this.#deps.db, work, subscription.slack_channel, {
        token: this.#options.slackBotToken,
        apiUrl: this.#options.slackApiUrl,
        timeoutMs: this.#options.notifyTimeoutMs,
        dashboardUrl: this.#options.dashboardUrl,
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
      body: JSON.stringify(webhookPayloadOf(outbox, this.#options.dashboardUrl)),
      timeoutMs: this.#options.notifyTimeoutMs,
    });
    return { ...outcome, message: null };
  }
}
