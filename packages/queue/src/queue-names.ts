import { DEFAULT_POOL } from "@overseer/run-contract";
import { QUEUE_DEFAULTS } from "@overseer/settings";

export { DEFAULT_POOL, QUEUE_DEFAULTS };

/** BullMQ queues (under the configured prefix). Run results travel on a stream (result-stream.ts). */
export const RUN_QUEUE = "runs";
/**
 * The run queue of one worker pool: `runs` for the default pool (the queue every worker served
 * before pools existed), `runs-<pool>` for another. Only workers that serve the pool consume it.
 */
export function runQueueName(pool: string): string {
  return pool === DEFAULT_POOL ? RUN_QUEUE : `${RUN_QUEUE}-${pool}`;
}
/** The coordinator's host-side pull request work (forge-queue.ts). */
export const FORGE_QUEUE = "forge";
/** The coordinator's notification deliveries from the outbox (notify-queue.ts). */
export const NOTIFY_QUEUE = "notify";
/** The coordinator's tracker intake: polls per source and issue re-reads (intake-queue.ts). */
export const INTAKE_QUEUE = "intake";
/** The coordinator's two-way status writes to intake issues (tracker-status-queue.ts). */
export const TRACKER_STATUS_QUEUE = "tracker-status";

/**
 * The BullMQ prefix of a cluster's queues: its key prefix as a hash tag (`{overseer}`), so
 * every key of a queue hashes to one Redis Cluster slot, as BullMQ's Lua scripts need (BullMQ
 * documents this for Cluster). Other keys (run logs, heartbeats) keep the plain prefix and spread
 * over the cluster; each of their commands touches one key.
 */
export function queueKeyPrefix(prefix: string): string {
  return `{${prefix}}`;
}

/**
 * A run job's id: its run's own id (a UUID), so enqueueing a run again (a repeated pass, a
 * reconcile) adds nothing. Nothing around it: it is in the job's key, its lock's key, its
 * `opts` and the queue's lists, and `opts` must stay within 64 bytes (run-contract runByIdSchema).
 */
export function runJobId(runId: string): string {
  return runId;
}

/** The id run jobs had before (`run-<runId>`): a job an older coordinator queued still has it. */
export function legacyRunJobId(runId: string): string {
  return `run-${runId}`;
}
