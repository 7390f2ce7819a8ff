import { type JobsOptions, Queue } from "bullmq";
import { z } from "zod";
import { NOTIFY_QUEUE, queueKeyPrefix } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";

/** One notification delivery to send (its row in `notification_deliveries`). */
export const notifyJobSchema = z.object({ v: z.literal(1), deliveryId: z.string().regex(/^[0-9]+$/) });
export type NotifyJob = z.infer<typeof notifyJobSchema>;

export function notifyJobId(deliveryId: string): string {
  return `notify-${deliveryId}`;
}

/**
 * Producer side of the notification queue (the coordinator's outbox delivery). One job per
 * delivery, id from the delivery id, so asking again while it waits, runs or backs off adds
 * nothing; Postgres says what is still to send, so a lost job (a flush) is asked for again by the
 * coordinator's sweep. Retries: `attempts` with exponential backoff from `backoffMs`. A job that
 * failed for good (Postgres unreachable, not the receiver) is retried when asked for again after
 * `retryAfterMs`.
 */
export class NotifyQueue {
  readonly queue: Queue;
  readonly #options: JobsOptions;
  readonly #retryAfterMs: number;

  constructor(
    connection: Redis,
    options: { prefix: string; attempts: number; backoffMs: number; retryAfterMs?: number },
  ) {
    this.queue = new Queue(NOTIFY_QUEUE, { connection, prefix: queueKeyPrefix(options.prefix) });
    this.#retryAfterMs = options.retryAfterMs ?? 30_000;
    this.#options = {
      attempts: options.attempts,
      backoff: { type: "exponential", delay: options.backoffMs },
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600 },
    };
  }

  /** Adds the delivery's job unless one waits, runs, backs off or failed recently. */
  async add(deliveryId: string): Promise<void> {
    const job: NotifyJob = notifyJobSchema.parse({ v: 1, deliveryId });
    const jobId = notifyJobId(deliveryId);
    const existing = await this.queue.getJob(jobId);
    if (existing) {
      const failedOn = existing.finishedOn ?? 0;
      if ((await existing.getState()) === "failed" && Date.now() - failedOn >= this.#retryAfterMs)
        await existing.retry("failed").catch(() => undefined);
      return;
    }
    await this.queue.add("deliver", job, { ...this.#options, jobId });
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
