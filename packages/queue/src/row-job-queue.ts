import { type JobsOptions, Queue } from "bullmq";
import { listenForBullmqErrors, type QueueErrorLog } from "./bullmq-errors.ts";
import { queueKeyPrefix } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";

export interface RowJobQueueOptions {
  prefix: string;
  attempts: number;
  backoffMs: number;
  /** A job that failed for good is retried when asked for again this long after. Default 30 s. */
  retryAfterMs?: number;
  /** The service's logger, for the queue's errors (listenForBullmqErrors). */
  log?: QueueErrorLog;
}

/**
 * A queue of one job per Postgres row to send (a notification delivery, a tracker update). The
 * job id comes from the row id, so asking again while it waits, runs or backs off adds nothing;
 * Postgres says what is still to send, so a lost job (a flush) is asked for again by the
 * coordinator's sweep. Retries: `attempts` with exponential backoff from `backoffMs`. A job that
 * failed for good (Postgres unreachable, not the receiver) is retried when asked for again after
 * `retryAfterMs`.
 */
export class RowJobQueue {
  readonly queue: Queue;
  readonly #options: JobsOptions;
  readonly #retryAfterMs: number;

  constructor(connection: Redis, name: string, options: RowJobQueueOptions) {
    this.queue = new Queue(name, { connection, prefix: queueKeyPrefix(options.prefix) });
    listenForBullmqErrors(this.queue, connection, options.log, `${name} queue`);
    this.#retryAfterMs = options.retryAfterMs ?? 30_000;
    this.#options = {
      attempts: options.attempts,
      backoff: { type: "exponential", delay: options.backoffMs },
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600 },
    };
  }

  /** Adds the row's job unless one waits, runs, backs off or failed recently. */
  protected async addOnce(jobName: string, jobId: string, data: object): Promise<void> {
    const existing = await this.queue.getJob(jobId);
    if (existing) {
      const failedOn = existing.finishedOn ?? 0;
      if ((await existing.getState()) === "failed" && Date.now() - failedOn >= this.#retryAfterMs)
        await existing.retry("failed").catch(() => undefined);
      return;
    }
    await this.queue.add(jobName, data, { ...this.#options, jobId });
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
