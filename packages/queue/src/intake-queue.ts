import { type JobsOptions, Queue } from "bullmq";
import { z } from "zod";
import { listenForBullmqErrors, type QueueErrorLog } from "./bullmq-errors.ts";
import { INTAKE_QUEUE, queueKeyPrefix } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";

/** One intake job: poll a source, or re-read one issue of it. */
export const intakeJobSchema = z.discriminatedUnion("kind", [
  z.object({ v: z.literal(1), kind: z.literal("poll"), sourceId: z.string().min(1) }),
  z.object({
    v: z.literal(1),
    kind: z.literal("read"),
    sourceId: z.string().min(1),
    issueId: z.string().min(1),
  }),
]);
export type IntakeJob = z.infer<typeof intakeJobSchema>;

/**
 * Producer side of the intake queue (the coordinator's intake runner). A re-read's job id comes
 * from (source, issue), so asking while one waits adds nothing; asked while one runs, a second is
 * queued behind it (what changed meanwhile is read). Each source polls through a BullMQ job
 * scheduler (`every` pollMs), one per source, none for a project without sources; Postgres holds
 * the sources, so `syncPolls` rebuilds the schedulers after a Redis flush.
 */
export class IntakeQueue {
  readonly queue: Queue;
  readonly #options: JobsOptions;

  constructor(
    connection: Redis,
    options: { prefix: string; attempts: number; backoffMs: number; log?: QueueErrorLog },
  ) {
    this.queue = new Queue(INTAKE_QUEUE, { connection, prefix: queueKeyPrefix(options.prefix) });
    listenForBullmqErrors(this.queue, connection, options.log, "intake queue");
    this.#options = {
      attempts: options.attempts,
      backoff: { type: "exponential", delay: options.backoffMs },
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600 },
    };
  }

  /** Asks for a re-read of one issue. */
  async read(sourceId: string, issueId: string): Promise<void> {
    const job: IntakeJob = intakeJobSchema.parse({ v: 1, kind: "read", sourceId, issueId });
    const base = `intake-${sourceId}-${encodeURIComponent(issueId)}`;
    const existing = await this.queue.getJob(base);
    const state = existing ? await existing.getState() : null;
    const jobId = state === "active" ? `${base}-next` : base;
    if (state === "failed") await existing?.remove().catch(() => undefined);
    await this.queue.add("read", job, { ...this.#options, jobId });
  }

  /** One poll scheduler per source in `sourceIds`, every `pollMs`; removes the others. */
  async syncPolls(sourceIds: readonly string[], pollMs: number): Promise<void> {
    const wanted = new Set(sourceIds.map((id) => `intake-poll-${id}`));
    for (const scheduler of await this.queue.getJobSchedulers(0, -1)) {
      const key = scheduler.key;
      if (key.startsWith("intake-poll-") && !wanted.has(key)) await this.queue.removeJobScheduler(key);
    }
    for (const sourceId of sourceIds) {
      const data: IntakeJob = { v: 1, kind: "poll", sourceId };
      await this.queue.upsertJobScheduler(
        `intake-poll-${sourceId}`,
        { every: pollMs },
        { name: "poll", data, opts: { removeOnComplete: true, removeOnFail: { age: 3600 } } },
      );
    }
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
