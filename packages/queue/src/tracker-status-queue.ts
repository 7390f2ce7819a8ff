import { type JobsOptions, Queue } from "bullmq";
import { z } from "zod";
import { queueKeyPrefix, TRACKER_STATUS_QUEUE } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";

/** One tracker update to write back to an issue (its row in `tracker_updates`). */
export const trackerStatusJobSchema = z.object({ v: z.literal(1), updateId: z.string().regex(/^[0-9]+$/) });
export type TrackerStatusJob = z.infer<typeof trackerStatusJobSchema>;

/**
 * Producer side of the tracker status queue (two-way status, tracker side). Like the
 * notification queue: one job per update, id from the update id, so asking again adds nothing;
 * Postgres says what is still to send, so a lost job is asked for again by the coordinator's
 * sweep. Retries: `attempts` with exponential backoff from `backoffMs`.
 */
export class TrackerStatusQueue {
  readonly queue: Queue;
  readonly #options: JobsOptions;
  readonly #retryAfterMs: number;

  constructor(
    connection: Redis,
    options: { prefix: string; attempts: number; backoffMs: number; retryAfterMs?: number },
  ) {
    this.queue = new Queue(TRACKER_STATUS_QUEUE, { connection, prefix: queueKeyPrefix(options.prefix) });
    this.#retryAfterMs = options.retryAfterMs ?? 30_000;
    this.#options = {
      attempts: options.attempts,
      backoff: { type: "exponential", delay: options.backoffMs },
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600 },
    };
  }

  /** Adds the update's job unless one waits, runs, backs off or failed recently. */
  async add(updateId: string): Promise<void> {
    const job: TrackerStatusJob = trackerStatusJobSchema.parse({ v: 1, updateId });
    const jobId = `tracker-status-${updateId}`;
    const existing = await this.queue.getJob(jobId);
    if (existing) {
      const failedOn = existing.finishedOn ?? 0;
      if ((await existing.getState()) === "failed" && Date.now() - failedOn >= this.#retryAfterMs)
        await existing.retry("failed").catch(() => undefined);
      return;
    }
    await this.queue.add("write", job, { ...this.#options, jobId });
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
