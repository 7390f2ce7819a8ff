import { PROCESS_DEFAULTS } from "@overseer/process";
import { DEFAULT_POOL } from "@overseer/run-contract";
import { QUEUE_DEFAULTS } from "./queue-defaults.ts";

const MIB = 1024 * 1024;

/**
 * Defaults of a worker process, defined once. The service merges its options over them
 * (`resolveWorkerOptions`), and the settings take their fallbacks from them. They live in
 * config, below the service, because the settings schema needs them.
 */
export const WORKER_DEFAULTS = Object.freeze({
  /** Runs one worker process executes at once (`OVERSEER_WORKER_CONCURRENCY`). */
  concurrency: 2,
  /** The worker pools a worker serves (`OVERSEER_WORKER_POOLS`): the default pool. */
  pools: Object.freeze([DEFAULT_POOL]) as readonly string[],
  /** BullMQ key prefix (`OVERSEER_QUEUE_PREFIX`). */
  prefix: QUEUE_DEFAULTS.prefix,
  /** Heartbeat period, also of the lease renewals and liveness files (`OVERSEER_HEARTBEAT_INTERVAL_MS`). */
  heartbeatIntervalMs: 5000,
  /**
   * BullMQ job lock renewed while a run lasts (`OVERSEER_WORKER_LOCK_MS`). A dead worker's run
   * is redelivered once it lapses: at most lock + two stalled intervals after the worker's last
   * renewal (≈ 20–40 s after a SIGKILL with these defaults).
   */
  lockDurationMs: 30_000,
  /**
   * How often the locks of running jobs are renewed; below the lock (`OVERSEER_WORKER_LOCK_RENEW_MS`).
   * One script per worker renews all its locks: three commands per running run per renewal.
   */
  lockRenewMs: 10_000,
  /** How often jobs of dead or frozen workers are looked for, once across the fleet (`OVERSEER_STALLED_INTERVAL_MS`). */
  stalledIntervalMs: 5000,
  /** Redeliveries after worker deaths before a job fails (`OVERSEER_MAX_STALLED_COUNT`). */
  maxStalledCount: 3,
  /** Skip the pre-checkout fetch when the mirror is this fresh (`OVERSEER_MIRROR_FRESH_MS`). */
  mirrorFreshMs: 5000,
  /** SIGTERM to SIGKILL of a run's process group (`OVERSEER_KILL_GRACE_MS`). */
  killGraceMs: PROCESS_DEFAULTS.killGraceMs,
  /** Run output kept per run, in Postgres and in its live log (`OVERSEER_MAX_OUTPUT_BYTES`). */
  maxOutputBytes: QUEUE_DEFAULTS.maxLogBytes,
  /** A run's stored transcript, as JSON bytes; the oldest entries go first (`OVERSEER_MAX_TRANSCRIPT_BYTES`, 4 MiB). */
  maxTranscriptBytes: 4 * MIB,
  /** Disk a run may add to its checkout and control dir, in bytes (`OVERSEER_RUN_DISK_MB`, 2048 MiB). */
  diskLimitBytes: 2048 * MIB,
  /** Size bound of the unpacked run images (`OVERSEER_IMAGE_CACHE_MB`, 20 GiB). */
  imageCacheBytes: 20480 * MIB,
  /** How long a run image tag's digest is reused (`OVERSEER_IMAGE_TAG_TTL_MS`). */
  imageTagTtlMs: 60_000,
  /** Pause between two disk measurements of a running run (`OVERSEER_DISK_CHECK_MS`). */
  diskCheckMs: 250,
  /** Files and directories a run may add to its checkout (`OVERSEER_RUN_MAX_FILES`). */
  maxFiles: 100_000,
  /** Bound of each host-side git step of a run (`OVERSEER_GIT_TIMEOUT_MS`). */
  gitTimeoutMs: 120_000,
  /** Objects a push to a local remote copies itself at most; 0: always `git push` (`OVERSEER_GIT_LOCAL_PUSH_MAX_OBJECTS`). */
  localPushMaxObjects: 1000,
  /** Niceness of the worker's own process, below the gateway and coordinator (`OVERSEER_WORKER_NICE`; @overseer/process service-priority.ts). */
  workerNice: 10,
  /** Niceness of a run's processes, below the services (`OVERSEER_RUN_NICE`; @overseer/process child-priority.ts). */
  runNice: PROCESS_DEFAULTS.runNice,
  /** Pause between two usage reports of a running run; 0: only at the end (`OVERSEER_USAGE_REPORT_MS`). */
  usageReportMs: 5000,
  /**
   * Retries in a row of a rate limit or an unreachable gateway, as the agent CLI reports them,
   * after which its run is ended (`OVERSEER_CLI_RETRY_LIMIT`): about 40 s of opencode's backoff.
   */
  cliRetryLimit: 5,
  /** On stop, how long running runs may go on before they are handed back (`OVERSEER_WORKER_DRAIN_MS`). */
  drainMs: 30_000,
});

/** Defaults of a worker's run fence (Postgres's word that a run is live before each ref move). */
export const RUN_FENCE_DEFAULTS = Object.freeze({
  /** How long a run waits for Postgres to answer its run fence (`OVERSEER_FENCE_WAIT_MS`). */
  waitMs: 120_000,
  /** Pause between two asks while Postgres does not answer. */
  retryMs: 500,
});
