import { formatZodIssues } from "@overseer/input-errors";
import {
  DEFAULT_POOL,
  type ResultMessage,
  type RunQueuePayload,
  resultMessageSchema,
  runQueuePayloadSchema,
} from "@overseer/run-contract";
import { COORDINATOR_DEFAULTS } from "@overseer/settings";
import { type JobsOptions, Queue } from "bullmq";
import type { z } from "zod";
import { ForgeQueue } from "./forge-queue.ts";
import { IntakeQueue } from "./intake-queue.ts";
import { NotifyQueue } from "./notify-queue.ts";
import { QUEUE_DEFAULTS, queueKeyPrefix, runJobId, runQueueName } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";
import { ResultStream } from "./result-stream.ts";
import { TrackerStatusQueue } from "./tracker-status-queue.ts";

export interface QueueOptions {
  /** Redis key prefix for every queue; default `overseer`. */
  prefix?: string;
  /**
   * Attempts for a run job whose worker failed for an infrastructure reason (git remote
   * down, disk full) before the coordinator records the failure; default 3.
   */
  infraAttempts?: number;
  /** First backoff between such attempts, doubled each time; default 1000 ms. */
  infraBackoffMs?: number;
  /** Attempts of one notification delivery before it is a dead letter; default 12. */
  notifyAttempts?: number;
  /** First backoff between a delivery's attempts, doubled each time; default 5000 ms. */
  notifyBackoffMs?: number;
}

/** Every option after defaults: what `RunQueues` accepts. */
export type ResolvedQueueOptions = Readonly<Required<QueueOptions>>;

/** Merges options over `QUEUE_DEFAULTS` once and checks them right after (key, rule, value received). */
export function resolveQueueOptions(options: QueueOptions = {}): ResolvedQueueOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const { prefix, infraAttempts, infraBackoffMs } = QUEUE_DEFAULTS;
  const { notifyAttempts, notifyBackoffMs } = COORDINATOR_DEFAULTS;
  const resolved: ResolvedQueueOptions = Object.freeze({
    prefix,
    infraAttempts,
    infraBackoffMs,
    notifyAttempts,
    notifyBackoffMs,
    ...(defined as QueueOptions),
  });
  if (!Number.isInteger(resolved.notifyAttempts) || resolved.notifyAttempts < 1)
    throw new RangeError(
      `notifyAttempts must be an integer of at least 1, received ${resolved.notifyAttempts}`,
    );
  if (!Number.isInteger(resolved.notifyBackoffMs) || resolved.notifyBackoffMs < 0)
    throw new RangeError(`notifyBackoffMs must be an integer >= 0, received ${resolved.notifyBackoffMs}`);
  if (!Number.isInteger(resolved.infraAttempts) || resolved.infraAttempts < 1)
    throw new RangeError(
      `infraAttempts must be an integer of at least 1, received ${resolved.infraAttempts}`,
    );
  if (!Number.isInteger(resolved.infraBackoffMs) || resolved.infraBackoffMs < 0)
    throw new RangeError(`infraBackoffMs must be an integer >= 0, received ${resolved.infraBackoffMs}`);
  return resolved;
}

/**
 * BullMQ's events stream of a run queue, kept short: nothing reads it (no QueueEvents; Postgres
 * and the results stream say what happened), and at BullMQ's default of 10,000 entries it held
 * a few hundred bytes per run (added, waiting, active, …) long after the run.
 */
const RUN_QUEUE_STREAMS = Object.freeze({ events: { maxLen: 100 } });

/** Where a run's work stands in Redis (RunQueues.runJobStates). */
export interface RunJobState {
  state: "active" | "reported" | "failed" | "missing";
  failedReason?: string;
}

/** Job counts by state (`RunQueues.counts`). */
export interface QueueCounts {
  /** Run jobs of every pool counted, summed. */
  runs: Record<string, number>;
  /** Run jobs per worker pool (`default` and each pool asked about). */
  pools: Record<string, Record<string, number>>;
  results: Record<string, number>;
}

/**
 * Producer side of the run queues and the results stream. Job ids are derived from run ids, so
 * enqueueing the same run twice (a repeated tick, a reconcile, a restarted coordinator) adds one
 * job. A run job goes to the queue of its worker pool (`runQueueName`); every read of a run's job
 * names that pool, so a look-up stays one key per run whatever the number of pools.
 */
export class RunQueues {
  /** The default pool's run queue. */
  readonly runs: Queue;
  private readonly poolQueues = new Map<string, Queue>();
  private readonly connection: Redis;
  private readonly prefix: string;
  /** Run results, from the workers to the coordinators (result-stream.ts). */
  readonly results: ResultStream;
  /** The coordinator's host-side pull request work (forge-queue.ts). */
  readonly forge: ForgeQueue;
  /** The coordinator's notification deliveries (notify-queue.ts). */
  readonly notify: NotifyQueue;
  /** The coordinator's tracker intake: polls and issue re-reads (intake-queue.ts). */
  readonly intake: IntakeQueue;
  /** The coordinator's two-way status writes to intake issues (tracker-status-queue.ts). */
  readonly trackerStatus: TrackerStatusQueue;
  private readonly jobOptions: JobsOptions;

  /** Takes options resolved once by `resolveQueueOptions`. */
  constructor(connection: Redis, options: ResolvedQueueOptions) {
    const prefix = queueKeyPrefix(options.prefix);
    this.connection = connection;
    this.prefix = prefix;
    this.runs = new Queue(runQueueName(DEFAULT_POOL), { connection, prefix, streams: RUN_QUEUE_STREAMS });
    this.poolQueues.set(DEFAULT_POOL, this.runs);
    this.results = new ResultStream(connection, options.prefix);
    this.forge = new ForgeQueue(connection, { prefix: options.prefix });
    this.notify = new NotifyQueue(connection, {
      prefix: options.prefix,
      attempts: options.notifyAttempts,
      backoffMs: options.notifyBackoffMs,
    });
    this.trackerStatus = new TrackerStatusQueue(connection, {
      prefix: options.prefix,
      attempts: options.notifyAttempts,
      backoffMs: options.notifyBackoffMs,
    });
    this.intake = new IntakeQueue(connection, {
      prefix: options.prefix,
      attempts: options.infraAttempts,
      backoffMs: options.infraBackoffMs,
    });
    this.jobOptions = {
      attempts: options.infraAttempts,
      backoff: { type: "exponential", delay: options.infraBackoffMs },
      removeOnComplete: true,
      removeOnFail: { age: 7 * 24 * 3600 },
    };
  }

  /** The run queue of one worker pool (created on first use, then kept). */
  runQueue(pool: string): Queue {
    let queue = this.poolQueues.get(pool);
    if (!queue) {
      queue = new Queue(runQueueName(pool), {
        connection: this.connection,
        prefix: this.prefix,
        streams: RUN_QUEUE_STREAMS,
      });
      this.poolQueues.set(pool, queue);
    }
    return queue;
  }

  /**
   * Queues a run in its pool's queue (`job.pool`); idempotent per run. Coordinators queue a
   * reference (`RunRef`, the job stored in Postgres); a whole `RunJob` is accepted too.
   */
  async enqueueRun(job: RunQueuePayload): Promise<void> {
    const payload = validPayload(runQueuePayloadSchema, job, `run job ${job.runId}`);
    await this.runQueue(payload.pool).add("run", payload, { ...this.jobOptions, jobId: runJobId(job.runId) });
  }

  /** Reports a result on the results stream; a repeated report applies once (by run id). */
  async reportResult(message: ResultMessage): Promise<void> {
    const payload = validPayload(resultMessageSchema, message, `result message for run ${message.runId}`);
    await this.results.report(payload);
  }

  /** Where one run's work stands in Redis (runJobStates); `pool` is the run's worker pool. */
  async runJobState(runId: string, pool: string = DEFAULT_POOL): Promise<RunJobState> {
    return (await this.runJobStates([runId], () => pool)).get(runId) ?? { state: "missing" };
  }

  /**
   * Where each run's work stands in Redis: `active` (a job exists and is not failed),
   * `reported` (its result was reported: applied soon, or retried from the results stream),
   * `failed` (the job exhausted its attempts; `failedReason` says why) or `missing` (nothing:
   * lost, e.g. Redis was flushed). Two commands per run, by key in its pool's queue (`poolOf`,
   * default: every run in the default pool; no list scan), all runs in one round trip.
   */
  async runJobStates(
    runIds: readonly string[],
    poolOf: (runId: string) => string = () => DEFAULT_POOL,
  ): Promise<Map<string, RunJobState>> {
    const states = new Map<string, RunJobState>();
    if (runIds.length === 0) return states;
    const client = (await this.runs.client) as unknown as Redis;
    const pipeline = client.pipeline();
    for (const runId of runIds) {
      pipeline.exists(this.results.reportedKey(runId));
      const runs = this.runQueue(poolOf(runId));
      pipeline.hmget(runs.toKey(runJobId(runId)), "timestamp", "finishedOn", "failedReason");
    }
    const replies = (await pipeline.exec()) ?? [];
    const reply = (i: number): unknown => {
      const [error, value] = replies[i] ?? [new Error("no reply from Redis"), null];
      if (error) throw error;
      return value;
    };
    const fields = (i: number) => reply(i) as (string | null)[];
    runIds.forEach((runId, n) => {
      if (reply(2 * n) === 1) {
        states.set(runId, { state: "reported" });
        return;
      }
      // Run jobs are removed on completion: a finished one still here failed for good.
      const [jobAt, jobFinished, failedReason] = fields(2 * n + 1);
      if (!jobAt) states.set(runId, { state: "missing" });
      else if (!jobFinished) states.set(runId, { state: "active" });
      else if (failedReason) states.set(runId, { state: "failed", failedReason });
      else states.set(runId, { state: "missing" });
    });
    return states;
  }

  /**
   * Whether the delivery holding `token` still owns the run's job: its BullMQ lock exists and
   * carries that token. False once the lock lapsed (a frozen or partitioned worker) or the
   * job was redelivered to another worker, whose token the lock then holds.
   */
  async holdsRunLock(runId: string, token: string, pool: string = DEFAULT_POOL): Promise<boolean> {
    const runs = this.runQueue(pool);
    const client = await runs.client;
    return (await client.get(runs.toKey(`${runJobId(runId)}:lock`))) === token;
  }

  /**
   * Counts one more failed application of the run's result and returns the count so far. Kept
   * in Redis beside the result job (7 days), so it survives the job being retried afresh.
   */
  countResultFailure(runId: string): Promise<number> {
    return this.results.countFailure(runId);
  }

  hasResult(runId: string): Promise<boolean> {
    return this.results.reported(runId);
  }

  /** Removes a queued job for a cancelled run (an active one is ended by its worker); `pool` is the run's. */
  async removeRun(runId: string, pool: string = DEFAULT_POOL): Promise<void> {
    const job = await this.runQueue(pool).getJob(runJobId(runId));
    if (!job) return;
    const state = await job.getState();
    if (state !== "active") await job.remove().catch(() => undefined);
  }

  /**
   * Job counts by state: per worker pool (the default one and each of `pools`), their sum over
   * every pool as `runs`, and the results stream's.
   */
  async counts(pools: Iterable<string> = []): Promise<QueueCounts> {
    const states = ["waiting", "active", "delayed", "completed", "failed", "paused", "prioritized"] as const;
    const names = [...new Set([DEFAULT_POOL, ...pools])].sort();
    const [perPool, stream] = await Promise.all([
      Promise.all(names.map((pool) => this.runQueue(pool).getJobCounts(...states))),
      this.results.counts(),
    ]);
    const zero = (): Record<string, number> => Object.fromEntries(states.map((s) => [s, 0]));
    const runs = zero();
    for (const counts of perPool) for (const s of states) runs[s] = (runs[s] ?? 0) + (counts[s] ?? 0);
    return {
      runs,
      pools: Object.fromEntries(names.map((pool, i) => [pool, perPool[i] ?? zero()])),
      results: { ...zero(), ...stream },
    };
  }

  async close(): Promise<void> {
    await Promise.all([
      ...[...this.poolQueues.values()].map((queue) => queue.close()),
      this.forge.close(),
      this.notify.close(),
      this.intake.close(),
      this.trackerStatus.close(),
    ]);
  }
}

/** Parses a payload before it is queued; a bad one is a programming error named field by field. */
function validPayload<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new Error(`refusing to queue an invalid ${what}: ${formatZodIssues(parsed.error.issues, value)}`);
}
