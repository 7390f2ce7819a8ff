/**
 * Defaults of the queue package, defined once. They live here, below the queue package, because
 * the service settings schema needs them and config must not import the queue.
 */
export const QUEUE_DEFAULTS = Object.freeze({
  /** Prefix of every Redis key (`OVERSEER_QUEUE_PREFIX`). */
  prefix: "overseer",
  /** Attempts of a run job whose worker failed for an infrastructure reason (`OVERSEER_JOB_ATTEMPTS`). */
  infraAttempts: 3,
  /** First backoff between such attempts, doubled each time (`OVERSEER_RETRY_BACKOFF_MS`). */
  infraBackoffMs: 1000,
  /** Bytes of one run's live log stream: as much output as a run keeps (`OVERSEER_MAX_OUTPUT_BYTES`). */
  maxLogBytes: 1024 * 1024,
  /** Entries of one run's live log stream (`OVERSEER_LIVE_LOG_ENTRIES`). */
  maxLogEntries: 256,
  /** Seconds a run log stream lives after its last write. */
  logTtlSeconds: 86_400,
});
