import { formatZodIssues } from "@overseer/input-errors";
import { type ForgeJob, forgeJobSchema } from "@overseer/run-contract";
import { type JobsOptions, Queue } from "bullmq";
import { FORGE_QUEUE, queueKeyPrefix } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";

/**
 * Producer side of the forge queue (the coordinator's host-side pull request work). Job ids are
 * deterministic, so what is asked again while it waits is one job:
 * - `ensure` per task and approved head, `merge` per task and head, `close` per pull request,
 *   `delivery` per stored webhook delivery;
 * - `sync` per task: one waiting sync however many deliveries and passes ask for it;
 * - a poll is a `sync` delayed to the end of the task's current polling slot (`pollMs`), one
 *   per slot: asked for on every scheduling pass of a project with open pull requests, it costs
 *   nothing more than one Redis call per open pull request and pass.
 * A job that failed for good is retried when asked for again after `retryAfterMs`, so a forge
 * that was down is tried again without a hot loop.
 */
export class ForgeQueue {
  readonly queue: Queue;
  readonly #options: JobsOptions;
  readonly #retryAfterMs: number;

  constructor(
    connection: Redis,
    options: { prefix: string; attempts?: number; backoffMs?: number; retryAfterMs?: number },
  ) {
    this.queue = new Queue(FORGE_QUEUE, { connection, prefix: queueKeyPrefix(options.prefix) });
    this.#retryAfterMs = options.retryAfterMs ?? 30_000;
    this.#options = {
      attempts: options.attempts ?? 4,
      backoff: { type: "exponential", delay: options.backoffMs ?? 2000 },
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600 },
    };
  }

  /** Adds the job unless one with its id waits, runs or failed recently; `delay` in ms. */
  async add(job: ForgeJob, delay = 0): Promise<void> {
    const parsed = forgeJobSchema.safeParse(job);
    if (!parsed.success) {
      throw new Error(`invalid forge job: ${formatZodIssues(parsed.error.issues, job)}`);
    }
    const jobId = forgeJobId(parsed.data, delay);
    const existing = await this.queue.getJob(jobId);
    if (existing) {
      const failedOn = existing.finishedOn ?? 0;
      if ((await existing.getState()) === "failed" && Date.now() - failedOn >= this.#retryAfterMs) {
        await existing.retry("failed").catch(() => undefined);
      }
      return;
    }
    await this.queue.add(parsed.data.kind, parsed.data, {
      ...this.#options,
      jobId,
      ...(delay > 0 ? { delay } : {}),
    });
  }

  /** The task's next poll: a `sync` at the end of its current slot of `pollMs`. */
  async addPoll(projectId: string, taskId: string, pollMs: number, now = Date.now()): Promise<void> {
    const slot = Math.floor(now / pollMs) + 1;
    const job: ForgeJob = { v: 1, kind: "sync", projectId, taskId };
    const jobId = `forge-poll-${safe(projectId)}-${safe(taskId)}-${slot}`;
    if (await this.queue.getJob(jobId)) return;
    await this.queue.add("sync", job, { ...this.#options, attempts: 1, jobId, delay: slot * pollMs - now });
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

/** The deterministic id of a forge job (BullMQ ids may not hold `:`). */
export function forgeJobId(job: ForgeJob, delay = 0): string {
  const at = `${safe(job.projectId)}`;
  switch (job.kind) {
    case "ensure":
      return `forge-ensure-${at}-${safe(job.taskId)}-${job.headSha}`;
    case "sync":
      return delay > 0
        ? `forge-sync-${at}-${safe(job.taskId)}-later`
        : `forge-sync-${at}-${safe(job.taskId)}`;
    case "delivery":
      return `forge-delivery-${job.forge}-${safe(job.deliveryId)}`;
    case "merge":
      return `forge-merge-${at}-${safe(job.taskId)}-${job.headSha}`;
    case "close":
      return `forge-close-${at}-${safe(job.taskId)}-${job.number}`;
  }
}

function safe(text: string): string {
  return text.replace(/[^A-Za-z0-9._/-]/g, "_");
}
