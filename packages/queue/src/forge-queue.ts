import { formatZodIssues } from "@overseer/input-errors";
import { type ForgeJob, forgeJobSchema } from "@overseer/run-contract";
import { type Job, type JobsOptions, Queue } from "bullmq";
import { listenForBullmqErrors, type QueueErrorLog } from "./bullmq-errors.ts";
import { FORGE_QUEUE, queueKeyPrefix } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";

/**
 * Producer side of the forge queue (the coordinator's host-side pull request work). Each job has
 * an identity (forgeJobId): `sync`, `ensure` and `merge` one per task, `close` per pull request,
 * `delivery` per stored webhook delivery. Per identity (BullMQ deduplication, keepLastIfActive):
 * - one job waits at most: what is asked again while it waits is that job;
 * - one job runs at most, so a task's syncs, ensures or merges never race each other (two syncs
 *   interleaving their reads and ETag writes could store an ETag for a state never reported);
 * - asked while its job runs, one re-run is kept and starts when the running one ends: the
 *   running job may have read Postgres or the forge before what asked again committed (checks
 *   gone green, an approval), and an ask dropped then would be a lost wake-up.
 * A poll is a `sync` delayed to the end of the task's current polling slot (`pollMs`), asked
 * for on every scheduling pass of a project with open pull requests; it shares the task's sync
 * identity, and gives way to a sync asked for now. A job that failed for good asks for itself
 * again `retryAfterMs` later (noteFailed): a forge that was down is tried again without a hot
 * loop, and meanwhile that delayed job is what any ask of its identity gets.
 */
export class ForgeQueue {
  readonly queue: Queue;
  readonly #options: JobsOptions;
  readonly #retryAfterMs: number;

  constructor(
    connection: Redis,
    options: {
      prefix: string;
      attempts?: number;
      backoffMs?: number;
      retryAfterMs?: number;
      /** The service's logger, for the queue's errors (listenForBullmqErrors). */
      log?: QueueErrorLog;
    },
  ) {
    this.queue = new Queue(FORGE_QUEUE, { connection, prefix: queueKeyPrefix(options.prefix) });
    listenForBullmqErrors(this.queue, connection, options.log, "forge queue");
    this.#retryAfterMs = options.retryAfterMs ?? 30_000;
    this.#options = {
      attempts: options.attempts ?? 4,
      backoff: { type: "exponential", delay: options.backoffMs ?? 2000 },
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600 },
    };
  }

  /** Asks for the job now (see the class comment for what an ask does per identity). */
  async add(job: ForgeJob): Promise<void> {
    const parsed = parseForgeJob(job);
    const id = forgeJobId(parsed);
    if (parsed.kind === "sync") await this.#dropWaitingPoll(id);
    await this.queue.add(parsed.kind, parsed, {
      ...this.#options,
      deduplication: { id, keepLastIfActive: true },
    });
  }

  /**
   * The task's next poll: a `sync` at the end of its current slot of `pollMs`, unless a sync of
   * the task waits or runs already (the runner asks for the next poll when a sync ends).
   */
  async addPoll(projectId: string, taskId: string, pollMs: number, now = Date.now()): Promise<void> {
    const job: ForgeJob = { v: 1, kind: "sync", projectId, taskId };
    const id = forgeJobId(job);
    if (await this.queue.getDeduplicationJobId(id)) return;
    const slot = Math.floor(now / pollMs) + 1;
    await this.queue.add(POLL, job, {
      ...this.#options,
      attempts: 1,
      delay: slot * pollMs - now,
      deduplication: { id, keepLastIfActive: true },
    });
  }

  /**
   * Called for every failed attempt (after BullMQ moved it): one that failed for good is asked
   * for again `retryAfterMs` later, under its identity (unless a re-run of it already waits).
   */
  async noteFailed(job: Job): Promise<void> {
    if (job.attemptsMade < (job.opts.attempts ?? 1)) return;
    const parsed = forgeJobSchema.safeParse(job.data);
    if (!parsed.success) return;
    await this.queue.add(RETRY, parsed.data, {
      ...this.#options,
      delay: this.#retryAfterMs,
      deduplication: { id: forgeJobId(parsed.data), keepLastIfActive: true },
    });
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  /** A poll still waiting for its slot is removed (a sync asked for now replaces it). */
  async #dropWaitingPoll(id: string): Promise<void> {
    const jobId = await this.queue.getDeduplicationJobId(id);
    if (!jobId) return;
    const waiting = await this.queue.getJob(jobId);
    if (waiting?.name !== POLL || (await waiting.getState()) !== "delayed") return;
    // Started meanwhile (locked): it cannot be removed, and the ask becomes its re-run.
    await waiting.remove().catch(() => undefined);
  }
}

/** The job name of a poll (a delayed `sync`). */
const POLL = "poll";
/** The job name of a job asked for again after it failed for good. */
const RETRY = "retry";

function parseForgeJob(job: ForgeJob): ForgeJob {
  const parsed = forgeJobSchema.safeParse(job);
  if (!parsed.success) {
    throw new Error(`invalid forge job: ${formatZodIssues(parsed.error.issues, job)}`);
  }
  return parsed.data;
}

/** The identity of a forge job (its deduplication id; BullMQ ids may not hold `:`). */
export function forgeJobId(job: ForgeJob): string {
  const at = `${safe(job.projectId)}`;
  switch (job.kind) {
    case "ensure":
      return `forge-ensure-${at}-${safe(job.taskId)}`;
    case "sync":
      return `forge-sync-${at}-${safe(job.taskId)}`;
    case "delivery":
      return `forge-delivery-${job.forge}-${safe(job.deliveryId)}`;
    case "merge":
      return `forge-merge-${at}-${safe(job.taskId)}`;
    case "close":
      return `forge-close-${at}-${safe(job.taskId)}-${job.number}`;
  }
}

function safe(text: string): string {
  return text.replace(/[^A-Za-z0-9._/-]/g, "_");
}
