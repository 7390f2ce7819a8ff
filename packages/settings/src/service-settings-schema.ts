import path from "node:path";
import { EGRESS_DEFAULTS, parseCidr, SANDBOX_DRIVER_NAMES } from "@overseer/run-contract";
import { LOGGER_DEFAULTS } from "@overseer/runtime";
import { z } from "zod";
import { CLUSTER_DEFAULTS } from "./cluster-defaults.ts";
import { COORDINATOR_DEFAULTS } from "./coordinator-defaults.ts";
import { COORDINATOR_IDLE_TX_MS_SPEC } from "./coordinator-idle-tx-setting.ts";
import { FORGE_SPECS } from "./forge-settings.ts";
import { GATEWAY_DEFAULTS } from "./gateway-defaults.ts";
import { GATEWAY_SPECS } from "./gateway-settings.ts";
import { INTAKE_CONCURRENCY_SPEC, INTAKE_POLL_MS_SPEC } from "./intake-settings.ts";
import { QUEUE_DEFAULTS } from "./queue-defaults.ts";
import { RUN_PROCESS_SPECS } from "./run-process-settings.ts";
import { LOG_LEVELS, type ServiceSettings } from "./service-settings.ts";
import {
  BYTES_MAX,
  booleanSetting,
  CIDR_EXPECTED,
  commaList,
  defaultWorkerId,
  durationLabel,
  hostPortList,
  integer,
  isOrigin,
  MIB,
  MIN_TASK_BYTES,
  MS_MAX,
  NAME_PATTERN,
  ORIGIN_EXPECTED,
  oneOf,
  url,
} from "./setting-value-schemas.ts";
import { RUN_FENCE_DEFAULTS, WORKER_DEFAULTS } from "./worker-defaults.ts";
import { WORKER_POOLS_SPEC } from "./worker-pool-setting.ts";

/** How one variable is read: its name, its fallback, its schema and its row of the reference. */
export interface SettingSpec<T> {
  readonly name: string;
  /**
   * Raw value used when the variable is unset; it goes through the same schema. Taken from the
   * `*_DEFAULTS` constant the service itself merges its options over, never written twice.
   */
  readonly fallback: string | (() => string) | undefined;
  /** The default as the reference shows it. Default: the fallback. */
  readonly defaultLabel?: string;
  readonly description: string;
  readonly schema: z.ZodType<T, string>;
  /** Never echo the value in errors. */
  readonly secret?: boolean;
}

type SpecTable = {
  readonly [K in keyof ServiceSettings]-?: SettingSpec<
    K extends "overseerUrl" ? string | undefined : Exclude<ServiceSettings[K], undefined>
  >;
};

export const SPECS: SpecTable = {
  databaseUrl: {
    name: "DATABASE_URL",
    fallback: CLUSTER_DEFAULTS.databaseUrl,
    description: "Postgres connection URL; Postgres is the source of truth.",
    schema: url(["postgres:", "postgresql:"], "a postgres:// or postgresql:// URL"),
  },
  redisUrl: {
    name: "REDIS_URL",
    fallback: CLUSTER_DEFAULTS.redisUrl,
    description: "Redis connection URL (queues and live events only).",
    schema: url(["redis:", "rediss:"], "a redis:// or rediss:// URL"),
  },
  redisClusterNodes: {
    name: "REDIS_CLUSTER_NODES",
    fallback: "",
    defaultLabel: "(empty: not a cluster)",
    description:
      "Comma-separated host:port seed nodes of a Redis Cluster; set, every service talks to the cluster (REDIS_URL then gives only the scheme, user and password). Queue keys carry the hash tag {OVERSEER_QUEUE_PREFIX}.",
    schema: hostPortList,
  },
  redisSentinels: {
    name: "REDIS_SENTINELS",
    fallback: "",
    defaultLabel: "(empty: no Sentinel)",
    description:
      "Comma-separated host:port Redis Sentinels; set, services ask them for the primary named REDIS_SENTINEL_MASTER and follow its failovers (REDIS_URL then gives only the scheme, user, password and database).",
    schema: hostPortList,
  },
  redisSentinelMaster: {
    name: "REDIS_SENTINEL_MASTER",
    fallback: CLUSTER_DEFAULTS.redisSentinelMaster,
    description: "Name of the primary the Sentinels of REDIS_SENTINELS watch.",
    schema: z.string().regex(NAME_PATTERN, { error: "letters, digits, ., _ or - (at most 128)" }),
  },
  dataDir: {
    name: "OVERSEER_DATA_DIR",
    fallback: CLUSTER_DEFAULTS.dataDir,
    defaultLabel: `${CLUSTER_DEFAULTS.dataDir} (made absolute against the working directory)`,
    description: "Directory for worker repository mirrors, checkouts and run logs.",
    schema: z
      .string()
      .refine((v) => !v.includes("\0"), { error: "a directory path" })
      .transform((v) => path.resolve(v)),
  },
  queuePrefix: {
    name: "OVERSEER_QUEUE_PREFIX",
    fallback: QUEUE_DEFAULTS.prefix,
    description: "Prefix of every Redis key, so several clusters can share one Redis.",
    schema: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, {
      error: "letters, digits, _ or - (at most 64, no colon)",
    }),
  },
  logLevel: {
    name: "LOG_LEVEL",
    fallback: LOGGER_DEFAULTS.level,
    description: `Log level: ${LOG_LEVELS.join(", ")}.`,
    schema: oneOf(LOG_LEVELS),
  },
  workerConcurrency: {
    name: "OVERSEER_WORKER_CONCURRENCY",
    fallback: String(WORKER_DEFAULTS.concurrency),
    description: "Runs one worker process executes at the same time.",
    schema: integer(1, 256),
  },
  workerId: {
    name: "OVERSEER_WORKER_ID",
    fallback: defaultWorkerId,
    defaultLabel: "<hostname>-<pid>",
    description: "Name of this worker in heartbeats, runs and logs; unique per process.",
    schema: z.string().regex(NAME_PATTERN, { error: "letters, digits, ., _ or - (at most 128)" }),
  },
  workerPools: WORKER_POOLS_SPEC,
  sandbox: {
    name: "OVERSEER_SANDBOX",
    fallback: CLUSTER_DEFAULTS.sandbox,
    description:
      "Sandbox driver of the worker's runs: bwrap, gvisor (runsc), or none (needs OVERSEER_SANDBOX_UNSAFE_NONE). A project's sandbox.driver must match it (none: the worker must allow it; gvisor: also any worker where runsc passes its start-up probe).",
    schema: oneOf(SANDBOX_DRIVER_NAMES),
  },
  sandboxUnsafeNone: {
    name: "OVERSEER_SANDBOX_UNSAFE_NONE",
    fallback: String(CLUSTER_DEFAULTS.sandboxUnsafeNone),
    description: "Allow the none driver: agents then run with the worker's own rights.",
    schema: booleanSetting,
  },
  allowUnenforcedLimits: {
    name: "OVERSEER_ALLOW_UNENFORCED_LIMITS",
    fallback: String(CLUSTER_DEFAULTS.allowUnenforcedLimits),
    description:
      "Inside a container without a delegated cgroup the worker refuses runs, whose per-run pids and memory limits it cannot enforce; 1 runs them anyway, bounded only by the container's own limits.",
    schema: booleanSetting,
  },
  leaseTtlMs: {
    name: "OVERSEER_LEASE_TTL_MS",
    fallback: String(COORDINATOR_DEFAULTS.leaseTtlMs),
    description: "Lifetime of a coordinator's lease on a project; a crashed owner is replaced after it.",
    schema: integer(1000, MS_MAX),
  },
  coordinatorIdleTxMs: COORDINATOR_IDLE_TX_MS_SPEC,
  reconcileIntervalMs: {
    name: "OVERSEER_RECONCILE_INTERVAL_MS",
    fallback: String(COORDINATOR_DEFAULTS.reconcileIntervalMs),
    description:
      "How often the coordinator checks one batch of active runs against Redis and re-enqueues missing jobs (the safety net; scheduling is driven by events).",
    schema: integer(100, MS_MAX),
  },
  reconcileBatch: {
    name: "OVERSEER_RECONCILE_BATCH",
    fallback: String(COORDINATOR_DEFAULTS.reconcileBatch),
    description: "Active runs one reconcile round checks (two Redis commands each), on from the last.",
    schema: integer(1, 100_000),
  },
  heartbeatIntervalMs: {
    name: "OVERSEER_HEARTBEAT_INTERVAL_MS",
    fallback: String(WORKER_DEFAULTS.heartbeatIntervalMs),
    description: "How often leases and worker heartbeats are renewed; must be below the lease TTL.",
    schema: integer(100, MS_MAX),
  },
  jobAttempts: {
    name: "OVERSEER_JOB_ATTEMPTS",
    fallback: String(QUEUE_DEFAULTS.infraAttempts),
    description:
      "Attempts of a run job whose worker failed for an infrastructure reason (git remote down, disk full) before the coordinator records the run as failed; the task then follows its project's retry policy (runner config attempts). The workers apply it to run jobs: set it on them (the coordinator uses it for its intake jobs).",
    schema: integer(1, 100),
  },
  retryBackoffMs: {
    name: "OVERSEER_RETRY_BACKOFF_MS",
    fallback: String(QUEUE_DEFAULTS.infraBackoffMs),
    description: "First delay before such a run job is tried again; doubled each attempt.",
    schema: integer(0, MS_MAX),
  },
  workerLockMs: {
    name: "OVERSEER_WORKER_LOCK_MS",
    fallback: String(WORKER_DEFAULTS.lockDurationMs),
    description:
      "Lock a worker holds on a running job, renewed while it runs; a dead or frozen worker's job is redelivered to another worker once it lapses, at most this plus two OVERSEER_STALLED_INTERVAL_MS after its last renewal (about 20–40 s after a SIGKILL with the defaults; a worker that stalls longer than this loses its run, which is then redone).",
    schema: integer(1000, MS_MAX),
  },
  workerLockRenewMs: {
    name: "OVERSEER_WORKER_LOCK_RENEW_MS",
    fallback: String(WORKER_DEFAULTS.lockRenewMs),
    description:
      "How often a worker renews the locks of its running jobs, all in one script: three Redis commands per running run each time; must be below OVERSEER_WORKER_LOCK_MS (the gap is how long a live worker may stall without losing its runs).",
    schema: integer(100, MS_MAX),
  },
  stalledIntervalMs: {
    name: "OVERSEER_STALLED_INTERVAL_MS",
    fallback: String(WORKER_DEFAULTS.stalledIntervalMs),
    description:
      "How often workers look for jobs whose lock lapsed (dead or frozen worker) and redeliver them; one check per interval runs across the fleet.",
    schema: integer(500, MS_MAX),
  },
  maxStalledCount: {
    name: "OVERSEER_MAX_STALLED_COUNT",
    fallback: String(WORKER_DEFAULTS.maxStalledCount),
    description: "Redeliveries of a job after worker deaths before it is recorded as a failed run.",
    schema: integer(1, 100),
  },
  resultConcurrency: {
    name: "OVERSEER_RESULT_CONCURRENCY",
    fallback: String(COORDINATOR_DEFAULTS.resultConcurrency),
    description: "Run results a coordinator applies in parallel (different projects).",
    schema: integer(1, 256),
  },
  resultAttempts: {
    name: "OVERSEER_RESULT_ATTEMPTS",
    fallback: String(COORDINATOR_DEFAULTS.resultAttempts),
    description:
      "Failed applications of one run result (a result Postgres keeps refusing) before its run is ended as failed with a result_unapplicable incident, so the project carries on.",
    schema: integer(1, 1000),
  },
  resultRetryMs: {
    name: "OVERSEER_RESULT_RETRY_MS",
    fallback: String(COORDINATOR_DEFAULTS.resultRetryMs),
    description: "A run result not applied (refused, or its coordinator died) is read again after this.",
    schema: integer(100, MS_MAX),
  },
  ...FORGE_SPECS,
  dashboardUrl: {
    name: "OVERSEER_DASHBOARD_URL",
    fallback: undefined,
    defaultLabel: "(none: run ids only)",
    description:
      "The dashboard's public URL (the gateway's, as people open it): pull request bodies link the task and each run there. Unset: they name the runs by id.",
    schema: url(["http:", "https:"], "an http:// or https:// URL").transform((v) => v.replace(/\/+$/, "")),
  },
  notifyAttempts: {
    name: "OVERSEER_NOTIFY_ATTEMPTS",
    fallback: String(COORDINATOR_DEFAULTS.notifyAttempts),
    description:
      "Attempts of one notification delivery (webhook, Slack) before it is a dead letter, shown on the deliveries page to redeliver. With the backoff default, about 2.8 hours of retrying.",
    schema: integer(1, 100),
  },
  notifyBackoffMs: {
    name: "OVERSEER_NOTIFY_BACKOFF_MS",
    fallback: String(COORDINATOR_DEFAULTS.notifyBackoffMs),
    description:
      "First wait between a delivery's attempts, doubled after each failure. Later deliveries of the same subscription and project wait behind it (order per project).",
    schema: integer(0, MS_MAX),
  },
  notifyTimeoutMs: {
    name: "OVERSEER_NOTIFY_TIMEOUT_MS",
    fallback: String(COORDINATOR_DEFAULTS.notifyTimeoutMs),
    description: "Bound on one webhook POST or Slack call; no answer within it is a failed attempt.",
    schema: integer(100, 600_000),
  },
  notifyConcurrency: {
    name: "OVERSEER_NOTIFY_CONCURRENCY",
    fallback: String(COORDINATOR_DEFAULTS.notifyConcurrency),
    description: "Notification deliveries a coordinator sends at once (other subscriptions or projects).",
    schema: integer(1, 256),
  },
  intakePollMs: INTAKE_POLL_MS_SPEC,
  intakeConcurrency: INTAKE_CONCURRENCY_SPEC,
  slackBotToken: {
    name: "OVERSEER_SLACK_BOT_TOKEN",
    fallback: COORDINATOR_DEFAULTS.slackBotToken,
    defaultLabel: "(empty: Slack deliveries fail)",
    description:
      "The Slack app's bot token (xoxb-…, scope chat:write) the coordinator posts Slack subscriptions' messages with (chat.postMessage to each subscription's channel) and updates an answered decision card's message with (chat.update). Empty (or a token Slack refuses: invalid_auth, token_revoked…): every Slack delivery becomes a dead letter at its first attempt, naming the reason; redeliver once the token is set.",
    schema: z.string().max(512, { error: "at most 512 characters" }),
    secret: true,
  },
  slackApiUrl: {
    name: "OVERSEER_SLACK_API_URL",
    fallback: COORDINATOR_DEFAULTS.slackApiUrl,
    description: "Slack's Web API base URL the coordinator calls (chat.postMessage, chat.update).",
    schema: url(["http:", "https:"], "an http:// or https:// URL").transform((v) =>
      v.endsWith("/") ? v : `${v}/`,
    ),
  },
  mirrorFreshMs: {
    name: "OVERSEER_MIRROR_FRESH_MS",
    fallback: String(WORKER_DEFAULTS.mirrorFreshMs),
    description:
      "A worker skips the fetch before a new task's checkout when its mirror was fetched or pushed this recently (by any worker process sharing its data dir) and its landing branch is at the newest landing Postgres recorded (0 always fetches).",
    schema: integer(0, MS_MAX),
  },
  killGraceMs: {
    name: "OVERSEER_KILL_GRACE_MS",
    fallback: String(WORKER_DEFAULTS.killGraceMs),
    description: "Delay between SIGTERM and SIGKILL when a run's process group is stopped.",
    schema: integer(0, 600_000),
  },
  shutdownGraceMs: {
    name: "OVERSEER_SHUTDOWN_GRACE_MS",
    fallback: String(COORDINATOR_DEFAULTS.shutdownGraceMs),
    defaultLabel: durationLabel(COORDINATOR_DEFAULTS.shutdownGraceMs),
    description:
      "Bound of a service's shutdown after SIGTERM: the coordinator stops taking results and passes, releases its leases (another replica takes its projects at once) and exits within it; the gateway closes its connections; a worker gets it after its drain. Past it the process exits with 1.",
    schema: integer(100, 600_000),
  },
  workerDrainMs: {
    name: "OVERSEER_WORKER_DRAIN_MS",
    fallback: String(WORKER_DEFAULTS.drainMs),
    defaultLabel: durationLabel(WORKER_DEFAULTS.drainMs),
    description:
      "On SIGTERM a worker takes no new job and lets its running runs finish for this long; then it aborts the rest and hands their jobs straight back to the queue (a second signal cuts the wait short).",
    schema: integer(0, 86_400_000),
  },
  fenceWaitMs: {
    name: "OVERSEER_FENCE_WAIT_MS",
    fallback: String(RUN_FENCE_DEFAULTS.waitMs),
    defaultLabel: durationLabel(RUN_FENCE_DEFAULTS.waitMs),
    description:
      "A worker moves no ref without Postgres's word that the run is live (the run fence); while Postgres cannot answer, the run waits for it this long, then its job fails and is retried.",
    schema: integer(0, 86_400_000),
  },
  egressAllowPrivate: {
    name: "OVERSEER_EGRESS_ALLOW_PRIVATE",
    fallback: "",
    defaultLabel: "(empty: no internal destination)",
    description:
      "Comma-separated CIDRs (10.0.0.0/8, 127.0.0.1/32, fd00::/8) the worker's egress proxy may connect to for allow-listed hosts although they are loopback/private: an explicit opt-in for a model gateway on a private network or on the host.",
    schema: commaList
      .pipe(z.array(z.string().refine((c) => parseCidr(c) !== null, { error: CIDR_EXPECTED })))
      .transform((list) => Object.freeze(list)),
  },
  egressIdleTimeoutMs: {
    name: "OVERSEER_EGRESS_IDLE_TIMEOUT_MS",
    fallback: String(EGRESS_DEFAULTS.idleTimeoutMs),
    defaultLabel: durationLabel(EGRESS_DEFAULTS.idleTimeoutMs),
    description: `A CONNECT tunnel or forwarded plain-HTTP request of a run's egress proxy that carries no byte either way for this long is closed on both sides, so a streamed model response may pause for anything shorter (a hung gateway ends here). Connecting has its own ${EGRESS_DEFAULTS.connectTimeoutMs / 1000} s limit; the run's idle_timeout_seconds and timeout_seconds still apply.`,
    schema: integer(1000, MS_MAX),
  },
  runDiskMb: {
    name: "OVERSEER_RUN_DISK_MB",
    fallback: String(WORKER_DEFAULTS.diskLimitBytes / MIB),
    description:
      "Disk (MiB, apparent size: a sparse file counts in full) a run may add to its checkout and control dir; beyond it the run is stopped and recorded as a disk_limit incident, and no single file may grow past it. A project's sandbox.disk_mb can only lower it.",
    schema: integer(1, 1_048_576),
  },
  imageCacheDir: {
    name: "OVERSEER_IMAGE_CACHE_DIR",
    fallback: "",
    defaultLabel: "(empty: `<OVERSEER_DATA_DIR>/images`)",
    description:
      "Where the worker keeps the run images it pulled (sandbox.image), unpacked once per digest and shared by every run on it. Workers on one host may share it: pulls are locked, and an image a live run uses is never evicted.",
    schema: z
      .string()
      .refine((v) => !v.includes("\0"), { error: "a directory path" })
      .transform((v) => (v === "" ? null : path.resolve(v))),
  },
  imageCacheMb: {
    name: "OVERSEER_IMAGE_CACHE_MB",
    fallback: String(WORKER_DEFAULTS.imageCacheBytes / MIB),
    description:
      "Size bound (MiB, unpacked) of the image cache: after a pull, the least recently used images no live run holds are removed until the cache fits.",
    schema: integer(1, 16_777_216),
  },
  imageInsecureRegistries: {
    name: "OVERSEER_IMAGE_INSECURE_REGISTRIES",
    fallback: "",
    defaultLabel: "(empty: every registry over verified TLS)",
    description:
      "Comma-separated registries (host:port) the worker pulls run images from over plain HTTP or unverified TLS: a registry on the host's loopback or a private network only.",
    schema: commaList
      .pipe(z.array(z.string().regex(/^[A-Za-z0-9.-]+(:[0-9]{1,5})?$/, "registries as host or host:port")))
      .transform((list) => Object.freeze(list)),
  },
  imageTagTtlMs: {
    name: "OVERSEER_IMAGE_TAG_TTL_MS",
    fallback: String(WORKER_DEFAULTS.imageTagTtlMs),
    description:
      "How long the digest a run image's tag resolved to is reused before the registry is asked again (0: every run asks). A digest reference (name@sha256:…) never asks.",
    schema: integer(0, MS_MAX),
  },
  diskCheckMs: {
    name: "OVERSEER_DISK_CHECK_MS",
    fallback: String(WORKER_DEFAULTS.diskCheckMs),
    description: "Pause between two measurements of a run's disk use (a huge checkout: less often).",
    schema: integer(10, 60_000),
  },
  runMaxFiles: {
    name: "OVERSEER_RUN_MAX_FILES",
    fallback: String(WORKER_DEFAULTS.maxFiles),
    description:
      "Files and directories (empty ones too) a run may add to its checkout and control dir; beyond it the run is stopped and recorded as a disk_limit incident (each one costs the host-side git add, commit and every later checkout).",
    schema: integer(1, 100_000_000),
  },
  gitTimeoutMs: {
    name: "OVERSEER_GIT_TIMEOUT_MS",
    fallback: String(WORKER_DEFAULTS.gitTimeoutMs),
    description:
      "Bound of each host-side git step of a run (add, commit, checkout, merge; not fetch or push, which talk to the remote); a step past it is stopped and the run recorded as a disk_limit incident.",
    schema: integer(1000, MS_MAX),
  },
  localPushMaxObjects: {
    name: "OVERSEER_GIT_LOCAL_PUSH_MAX_OBJECTS",
    fallback: String(WORKER_DEFAULTS.localPushMaxObjects),
    description:
      "A push to a remote on the worker's file system (a local path) copies up to this many objects into it itself and moves the branch under git's ref lock, instead of running git push (six processes); a larger push, a remote whose config receive-pack acts on, or 0 here uses git push.",
    schema: integer(0, 1_000_000),
  },
  ...RUN_PROCESS_SPECS,
  usageReportMs: {
    name: "OVERSEER_USAGE_REPORT_MS",
    fallback: String(WORKER_DEFAULTS.usageReportMs),
    defaultLabel: "5000 (5 s)",
    description:
      "Pause between two usage reports of a running run (sent only when its tokens or cost changed), which feed the live token/cost counter and the budget check; 0 reports only when the run ends. A cancel or a shutdown reports at once, before the agent's process group is ended (the cancel has already ended the run, so its usage follows it).",
    schema: integer(0, MS_MAX),
  },
  cliRetryLimit: {
    name: "OVERSEER_CLI_RETRY_LIMIT",
    fallback: String(WORKER_DEFAULTS.cliRetryLimit),
    defaultLabel: String(WORKER_DEFAULTS.cliRetryLimit),
    description:
      "Retries in a row of a rate limit or an unreachable model gateway, as the agent CLI reports them (Claude Code's api_retry events, opencode's stream errors), after which the worker ends the run with that cause and its configuration incident; a refused key, an unknown model or an exhausted quota end the run at the first retry.",
    schema: integer(1, 1000),
  },
  maxOutputBytes: {
    name: "OVERSEER_MAX_OUTPUT_BYTES",
    fallback: String(WORKER_DEFAULTS.maxOutputBytes),
    description:
      "Run output kept per run, in Postgres and in the live log stream in Redis; beyond it the oldest output is dropped with a marker.",
    schema: integer(1024, BYTES_MAX),
  },
  maxTranscriptBytes: {
    name: "OVERSEER_MAX_TRANSCRIPT_BYTES",
    fallback: String(WORKER_DEFAULTS.maxTranscriptBytes),
    defaultLabel: `${WORKER_DEFAULTS.maxTranscriptBytes} (4 MiB)`,
    description:
      "A run's stored transcript (its messages, tool calls, results and edits parsed from the agent's output, as JSON); beyond it the oldest entries are dropped and the transcript is marked truncated. Each tool output in it is already cut to 8 KiB.",
    schema: integer(1024, BYTES_MAX),
  },
  liveLogEntries: {
    name: "OVERSEER_LIVE_LOG_ENTRIES",
    fallback: String(QUEUE_DEFAULTS.maxLogEntries),
    description:
      "Entries of one run's live log stream in Redis (trimmed exactly); each entry holds at most OVERSEER_MAX_OUTPUT_BYTES / this many bytes.",
    schema: integer(1, 65_536),
  },
  gatewayHost: {
    name: "OVERSEER_GATEWAY_HOST",
    fallback: GATEWAY_DEFAULTS.host,
    description: "Address the HTTP gateway listens on (0.0.0.0 to expose it).",
    schema: z.string().regex(/^[A-Za-z0-9.:[\]-]{1,253}$/, { error: "a host name or IP address" }),
  },
  gatewayPort: {
    name: "OVERSEER_GATEWAY_PORT",
    fallback: String(GATEWAY_DEFAULTS.port),
    description: "Port of the HTTP gateway (0 picks a free port).",
    schema: integer(0, 65535),
  },
  corsOrigins: {
    name: "OVERSEER_CORS_ORIGINS",
    fallback: GATEWAY_DEFAULTS.corsOrigins.join(","),
    defaultLabel: "(empty: no cross-origin access)",
    description: "Comma-separated origins allowed to call the API from a browser, or *.",
    schema: commaList
      .pipe(
        z
          .array(z.string().refine(isOrigin, { error: ORIGIN_EXPECTED }))
          .refine((list) => !list.includes("*") || list.length === 1, { error: ORIGIN_EXPECTED }),
      )
      .transform((list) => Object.freeze(list.map((o) => o.replace(/\/$/, "")))),
  },
  rateLimitWritesPerMinute: {
    name: "OVERSEER_RATE_LIMIT_WRITES_PER_MINUTE",
    fallback: String(GATEWAY_DEFAULTS.rateLimitWritesPerMinute),
    description: "Write requests (POST/PUT/PATCH/DELETE) allowed per token per minute.",
    schema: integer(1, 1_000_000),
  },
  maxBodyBytes: {
    name: "OVERSEER_MAX_BODY_BYTES",
    fallback: String(GATEWAY_DEFAULTS.maxBodyBytes),
    description: "Largest HTTP request body the gateway accepts.",
    schema: integer(1024, BYTES_MAX),
  },
  maxBodyDepth: {
    name: "OVERSEER_MAX_BODY_DEPTH",
    fallback: String(GATEWAY_DEFAULTS.maxBodyDepth),
    description: "Deepest nesting of arrays and objects in a request body; deeper ones get 400 unparsed.",
    schema: integer(2, 10_000),
  },
  maxImportTasks: {
    name: "OVERSEER_MAX_IMPORT_TASKS",
    fallback: String(GATEWAY_DEFAULTS.maxImportTasks),
    description: `Most tasks one task import request or one mission plan may hold (they are inserted in batches, all or nothing); more gets 422 asking to split the file, and a larger plan is refused back to its planner. Read by the gateway and the coordinator. An import of this many tasks must fit in OVERSEER_MAX_BODY_BYTES at ${MIN_TASK_BYTES} bytes a task (the default ${GATEWAY_DEFAULTS.maxImportTasks} leaves about ${Math.round(GATEWAY_DEFAULTS.maxBodyBytes / GATEWAY_DEFAULTS.maxImportTasks / 10) * 10} bytes a task in ${GATEWAY_DEFAULTS.maxBodyBytes / MIB} MiB).`,
    schema: integer(1, 1_000_000),
  },
  maxTitleChars: {
    name: "OVERSEER_MAX_TITLE_CHARS",
    fallback: String(GATEWAY_DEFAULTS.maxTitleChars),
    description:
      "Longest task title the gateway accepts in an import or a new task (422 beyond it; details go in the body). Task files and planner plans use the same validator with this default.",
    schema: integer(1, 100_000),
  },
  maxOpenStreams: GATEWAY_SPECS.maxOpenStreams,
  maxStreamsPerToken: GATEWAY_SPECS.maxStreamsPerToken,
  maxStreamsPerAddress: GATEWAY_SPECS.maxStreamsPerAddress,
  statusCacheTtlMs: GATEWAY_SPECS.statusCacheTtlMs,
  fleetCacheMs: GATEWAY_SPECS.fleetCacheMs,
  fleetStaleMs: GATEWAY_SPECS.fleetStaleMs,
  compressMinBytes: GATEWAY_SPECS.compressMinBytes,
  accessLogSample: GATEWAY_SPECS.accessLogSample,
  accessLogSlowMs: GATEWAY_SPECS.accessLogSlowMs,
  boardSessionTtlMs: {
    name: "OVERSEER_BOARD_SESSION_TTL_MS",
    fallback: String(GATEWAY_DEFAULTS.boardSessionTtlMs),
    defaultLabel: durationLabel(GATEWAY_DEFAULTS.boardSessionTtlMs),
    description:
      "Lifetime of a Bull Board session at /admin/queues, opened by an admin token from the web app; the session then ends and the board answers 401.",
    schema: integer(1000, 86_400_000),
  },
  forgeWebhookSecret: {
    name: "OVERSEER_FORGE_WEBHOOK_SECRET",
    fallback: GATEWAY_DEFAULTS.forgeWebhookSecret,
    defaultLabel: "(empty: webhooks refused)",
    description:
      "Secret of the forge webhooks at POST /api/v1/forge/{id}/webhooks/{forge}: GitHub and Gitea sign each delivery with it (HMAC-SHA256), GitLab sends it as X-Gitlab-Token. Set the same value in the forge's webhook settings. Empty: every delivery is refused with 503.",
    schema: z.string().max(256, { error: "at most 256 characters" }),
    secret: true,
  },
  slackSigningSecret: {
    name: "OVERSEER_SLACK_SIGNING_SECRET",
    fallback: GATEWAY_DEFAULTS.slackSigningSecret,
    defaultLabel: "(empty: Slack clicks refused)",
    description:
      "Signing secret of the Slack app (Basic Information → App Credentials): every click at POST /api/v1/slack/interactions must carry its v0 signature (X-Slack-Signature over X-Slack-Request-Timestamp and the body) and a timestamp at most 5 minutes old. Empty: every click is refused with 503.",
    schema: z.string().max(256, { error: "at most 256 characters" }),
    secret: true,
  },
  slackOperators: {
    name: "OVERSEER_SLACK_OPERATORS",
    fallback: "",
    defaultLabel: "(empty: no Slack user may answer)",
    description:
      "Who may answer decision cards from Slack: comma-separated `<Slack user id>=<API token id>` pairs (ids from overseer token list). A click acts as that token: it must be active and its scope must allow resolving in the project's state; other Slack users are refused.",
    schema: commaList.pipe(
      z
        .array(
          z.string().regex(/^[UW][A-Z0-9]{2,30}=[0-9a-f-]{36}$/, {
            error:
              "comma-separated <Slack user id>=<API token id> pairs such as U0123ABCD=1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed",
          }),
        )
        .transform((pairs) =>
          Object.freeze(Object.fromEntries(pairs.map((pair) => pair.split("=") as [string, string]))),
        ),
    ),
  },
  slackResponseOrigin: {
    name: "OVERSEER_SLACK_RESPONSE_ORIGIN",
    fallback: GATEWAY_DEFAULTS.slackResponseOrigin,
    description:
      "Origin a click's response_url must have: the gateway posts the updated message (who chose what) there and nowhere else.",
    schema: url(["http:", "https:"], "an http:// or https:// origin").transform((v) => v.replace(/\/+$/, "")),
  },
  overseerUrl: {
    name: "OVERSEER_URL",
    fallback: undefined,
    defaultLabel: `http://<OVERSEER_GATEWAY_HOST>:<OVERSEER_GATEWAY_PORT> (http://${GATEWAY_DEFAULTS.host}:${GATEWAY_DEFAULTS.port})`,
    description: "Gateway URL used by the CLI.",
    schema: url(["http:", "https:"], "an http:// or https:// URL").transform((v) => v.replace(/\/+$/, "")),
  },
  token: {
    name: "OVERSEER_TOKEN",
    fallback: undefined,
    defaultLabel: "(none)",
    description: "Bearer token the CLI sends to the gateway (create one with overseer token create).",
    schema: z.string().regex(/^\S+$/, { error: "a token without whitespace" }),
    secret: true,
  },
};
