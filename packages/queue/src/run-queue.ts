import { formatZodIssues } from "@overseer/input-errors";
import {
  DEFAULT_POOL,
  queuedRunSchema,
  type ResultMessage,
  RUN_JOB_VERSION,
  type RunById,
  type RunQueuePayload,
  resultMessageSchema,
  runQueuePayloadSchema,
} from "@overseer/run-contract";
import { COORDINATOR_DEFAULTS } from "@overseer/settings";
import { type KeepJobs, Queue } from "bullmq";
import type { z } from "zod";
import { listenForBullmqErrors, type QueueErrorLog } from "./bullmq-errors.ts";
import { ForgeQueue } from "./forge-queue.ts";
import { IntakeQueue } from "./intake-queue.ts";
import { NotifyQueue } from "./notify-queue.ts";
import { legacyRunJobId, QUEUE_DEFAULTS, queueKeyPrefix, runJobId, runQueueName } from "./queue-names.ts";
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

/**
 * What the workers of the run queues apply to every run job (pool-worker.ts): the attempts and
 * backoff of a job whose worker failed for an infrastructure reason, and what is kept of a
 * finished job. Set on the worker, not on each job, so the job's Redis hash holds only its id,
 * its tag and BullMQ's own fields (run-contract `runByIdSchema`: every value within 64 bytes).
 * A job queued with its own options (an older coordinator) keeps them.
 */
export interface RunJobPolicy {
  readonly attempts: number;
  readonly backoff: { readonly type: "exponential"; readonly delay: number };
  /** A completed run job goes at once: its result travels on the results stream. */
  readonly removeOnComplete: KeepJobs;
  /** A failed one stays a week, for `runJobStates` and the operator. */
  readonly removeOnFail: KeepJobs;
}

/** The run job policy of resolved queue options. */
export function runJobPolicy(
  options: Pick<ResolvedQueueOptions, "infraAttempts" | "infraBackoffMs">,
): RunJobPolicy {
  return Object.freeze({
    attempts: options.infraAttempts,
    backoff: Object.freeze({ type: "exponential" as const, delay: options.infraBackoffMs }),
    removeOnComplete: Object.freeze({ count: 0 }),
    removeOnFail: Object.freeze({ age: 7 * 24 * 3600 }),
  });
}

/** How a run job is stored for a reference: its tag alone (the job id names the run, the queue the pool). */
const RUN_BY_ID: RunById = Object.freeze({ v: RUN_JOB_VERSION, kind: "run-by-id" });

/**
 * What a delivered run job names, from its data, its id and the pool of the queue it came from:
 * a job stored by id (`run-by-id`) is the reference `{ runId, pool }`; a full reference or a
 * whole job is as queued. A malformed one: `error` says what is wrong, field by field.
 */
export function deliveredRun(
  job: { readonly id?: string | undefined; readonly data: unknown },
  pool: string,
): { payload: RunQueuePayload; error?: undefined } | { payload?: undefined; error: string } {
  const parsed = queuedRunSchema.safeParse(job.data);
  if (!parsed.success) return { error: formatZodIssues(parsed.error.issues, job.data) };
  if (parsed.data.kind !== "run-by-id") return { payload: parsed.data };
  if (!job.id) return { error: "a run job stored by id has no id" };
  return { payload: { v: RUN_JOB_VERSION, kind: "run-ref", runId: job.id, pool } };
}

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
  private readonly log: QueueErrorLog | undefined;
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
  /** What the run queues' workers apply to every run job (pool-worker.ts). */
  readonly runJobPolicy: RunJobPolicy;

  /**
   * Takes options resolved once by `resolveQueueOptions`, and the service's logger for what its
   * BullMQ queues report (`listenForBullmqErrors`: a Redis outage is one line; without a logger,
   * dropped). `plain`, when given, carries the results stream: a connection no BullMQ queue
   * uses. BullMQ defines its Lua scripts (about fifty) on every connection its queues use, and
   * ioredis copies each defined command into every pipeline made on such a connection, so a
   * service that reports results often (a worker) keeps them apart.
   */
  constructor(
    connection: Redis,
    options: ResolvedQueueOptions,
    log?: QueueErrorLog,
    plain: Redis = connection,
  ) {
    const prefix = queueKeyPrefix(options.prefix);
    this.connection = connection;
    this.prefix = prefix;
    this.log = log;
    this.runs = this.runQueue(DEFAULT_POOL);
    this.results = new ResultStream(plain, options.prefix);
    this.forge = new ForgeQueue(connection, { prefix: options.prefix, log });
    this.notify = new NotifyQueue(connection, {
      prefix: options.prefix,
      attempts: options.notifyAttempts,
      backoffMs: options.notifyBackoffMs,
      log,
    });
    this.trackerStatus = new TrackerStatusQueue(connection, {
      prefix: options.prefix,
      attempts: options.notifyAttempts,
      backoffMs: options.notifyBackoffMs,
      log,
    });
    this.intake = new IntakeQueue(connection, {
      prefix: options.prefix,
      attempts: options.infraAttempts,
      backoffMs: options.infraBackoffMs,
      log,
    });
    this.runJobPolicy = runJobPolicy(options);
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
      listenForBullmqErrors(queue, this.connection, this.log, `${runQueueName(pool)} queue`);
      this.poolQueues.set(pool, queue);
    }
    return queue;
  }

  /**
   * Queues a run in its pool's queue (`job.pool`); idempotent per run (its job id). Coordinators
   * queue a reference (`RunRef`, the job stored in Postgres), stored by id (`runByIdSchema`); a
   * whole `RunJob` is accepted too. The job carries no options: its workers apply the queue's
   * `runJobPolicy`.
   */
  async enqueueRun(job: RunQueuePayload): Promise<void> {
    const payload = validPayload(runQueuePayloadSchema, job, `run job ${job.runId}`);
    const data = payload.kind === "run-ref" ? RUN_BY_ID : payload;
    await this.runQueue(payload.pool).add("run", data, { jobId: runJobId(job.runId) });
  }

  /** Reports a result on the results stream; a repeated report applies once (by run id). */
  async reportResult(message: ResultMessage): Promise<void> {
    const payload = validPayload(resultMessageSchema, message, `result message for run ${message.runId}`);
    await this.results.report(payload);
  }

  /** Where one run's work stands in Redis (runJobStates); `pool` is the run's worker pool. */
  async runJobState(runId: string, pool: string = DEFAULT_POOL): Promise<RunJobState> {
    const state = (await this.runJobStates([runId], () => pool)).get(runId) ?? { state: "missing" };
    if (state.state !== "missing") return state;
    // Before a repair re-enqueues it: a job an older coordinator queued under the former id.
    const runs = this.runQueue(pool);
    const client = await runs.client;
    return jobHashState(await client.hmget(runs.toKey(legacyRunJobId(runId)), ...JOB_STATE_FIELDS));
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
      pipeline.hmget(runs.toKey(runJobId(runId)), ...JOB_STATE_FIELDS);
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
      states.set(runId, jobHashState(fields(2 * n + 1)));
    });
    return states;
  }

  /**
   * Whether the delivery holding `token` still owns its run job (`jobId`: `runJobId`, or
   * `legacyRunJobId` for a job an older coordinator queued): its BullMQ lock exists and carries
   * that token. False once the lock lapsed (a frozen or partitioned worker) or the job was
   * redelivered to another worker, whose token the lock then holds.
   */
  async holdsRunLock(jobId: string, token: string, pool: string = DEFAULT_POOL): Promise<boolean> {
    const runs = this.runQueue(pool);
    const client = await runs.client;
    return (await client.get(runs.toKey(`${jobId}:lock`))) === token;
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
    const queue = this.runQueue(pool);
    const job = (await queue.getJob(runJobId(runId))) ?? (await queue.getJob(legacyRunJobId(runId)));
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

/** The fields of a run job's hash that say where it stands (`jobHashState`). */
const JOB_STATE_FIELDS = ["timestamp", "finishedOn", "failedReason"] as const;

/** Where a run job stands from its `JOB_STATE_FIELDS` (all null: no such job). */
function jobHashState([jobAt, jobFinished, failedReason]: readonly (
  | string
  | null
  | undefined
)[]): RunJobState {
  // Run jobs are removed on completion: a finished one still here failed for good.
  if (!jobAt) return { state: "missing" };
  if (!jobFinished) return { state: "active" };
  if (failedReason) return { state: "failed", failedReason };
  return { state: "missing" };
}

/** Parses a payload before it is queued; a bad one is a programming error named field by field. */
function validPayload<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new Error(`refusing to queue an invalid ${what}: ${formatZodIssues(parsed.error.issues, value)}`);
}
