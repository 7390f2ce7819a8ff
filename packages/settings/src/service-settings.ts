import type { SandboxDriverName } from "@overseer/run-contract";

/**
 * Process-wide settings of the coordinator, workers, gateway and CLI, read from environment
 * variables. Every variable has a default that works on a developer machine with local
 * Postgres and Redis, so `loadSettings()` with an empty environment succeeds.
 *
 * Rules shared by every variable: surrounding whitespace is trimmed, and an empty value
 * counts as unset (compose files often pass `VAR=` through). Invalid values are all reported
 * together in one `ConfigError`, each with what was expected and what was received.
 */
export interface ServiceSettings {
  /** `DATABASE_URL`: Postgres connection URL. Default `postgres://postgres@127.0.0.1:5432/overseer`. */
  readonly databaseUrl: string;
  /** `REDIS_URL`: Redis connection URL (`redis:` or `rediss:`). Default `redis://127.0.0.1:6379`. */
  readonly redisUrl: string;
  /** `REDIS_CLUSTER_NODES`: seed nodes (`host:port`) of a Redis Cluster; empty: a single server or Sentinel. Default empty. */
  readonly redisClusterNodes: readonly string[];
  /** `REDIS_SENTINELS`: Sentinels (`host:port`) that name the Redis primary; empty: no Sentinel. Default empty. */
  readonly redisSentinels: readonly string[];
  /** `REDIS_SENTINEL_MASTER`: name of the primary the Sentinels watch. Default `mymaster`. */
  readonly redisSentinelMaster: string;
  /** `OVERSEER_DATA_DIR`: worker mirrors, run logs, temp files; absolute. Default `./.overseer-data` resolved against the working directory. */
  readonly dataDir: string;
  /** `OVERSEER_QUEUE_PREFIX`: BullMQ key prefix, to share one Redis between clusters. Default `overseer`. */
  readonly queuePrefix: string;
  /** `LOG_LEVEL`: pino level. Default `info`. */
  readonly logLevel: LogLevel;
  /** `OVERSEER_WORKER_CONCURRENCY`: runs one worker process executes at once. Default `2`. */
  readonly workerConcurrency: number;
  /** `OVERSEER_WORKER_ID`: stable worker name in heartbeats and run rows. Default `<hostname>-<pid>`. */
  readonly workerId: string;
  /** `OVERSEER_WORKER_POOLS`: the worker pools this worker serves, one slot budget for all. Default `default`. */
  readonly workerPools: readonly string[];
  /** `OVERSEER_SANDBOX`: default sandbox driver for runs. Default `bwrap`. */
  readonly sandbox: SandboxDriverName;
  /** `OVERSEER_SANDBOX_UNSAFE_NONE`: allow the `none` driver (no isolation). Default `false`. */
  readonly sandboxUnsafeNone: boolean;
  /** `OVERSEER_ALLOW_UNENFORCED_LIMITS`: run runs whose per-run limits no cgroup enforces inside a container. Default `false`. */
  readonly allowUnenforcedLimits: boolean;
  /** `OVERSEER_LEASE_TTL_MS`: project ownership lease lifetime; a dead owner is replaced after this. Default `15000`. */
  readonly leaseTtlMs: number;
  /** `OVERSEER_COORDINATOR_IDLE_TX_MS`: Postgres ends a coordinator transaction idle this long (its locks go with it); at most the lease TTL. Default: the lease TTL. */
  readonly coordinatorIdleTxMs: number | undefined;
  /** `OVERSEER_RECONCILE_INTERVAL_MS`: how often the coordinator re-reads Postgres and repairs queues. Default `5000`. */
  readonly reconcileIntervalMs: number;
  /** `OVERSEER_RECONCILE_BATCH`: active runs one reconcile round checks against Redis. Default `500`. */
  readonly reconcileBatch: number;
  /** `OVERSEER_HEARTBEAT_INTERVAL_MS`: how often leases and worker heartbeats are renewed; below the lease TTL. Default `5000`. */
  readonly heartbeatIntervalMs: number;
  /** `OVERSEER_JOB_ATTEMPTS`: attempts of a run job whose worker failed for an infrastructure reason. Default `3`. */
  readonly jobAttempts: number;
  /** `OVERSEER_RETRY_BACKOFF_MS`: first delay before such a job is tried again, doubled each attempt. Default `1000`. */
  readonly retryBackoffMs: number;
  /** `OVERSEER_WORKER_LOCK_MS`: job lock a worker renews while a run lasts; redelivery after a worker death waits for it to lapse. Default `30000`. */
  readonly workerLockMs: number;
  /** `OVERSEER_WORKER_LOCK_RENEW_MS`: how often a worker renews the locks of its running jobs; below the lock. Default `10000`. */
  readonly workerLockRenewMs: number;
  /** `OVERSEER_STALLED_INTERVAL_MS`: how often workers check for jobs of dead workers. Default `5000`. */
  readonly stalledIntervalMs: number;
  /** `OVERSEER_MAX_STALLED_COUNT`: redeliveries after worker deaths before the run is failed. Default `3`. */
  readonly maxStalledCount: number;
  /** `OVERSEER_RESULT_CONCURRENCY`: run results a coordinator applies in parallel. Default `8`. */
  readonly resultConcurrency: number;
  /** `OVERSEER_RESULT_ATTEMPTS`: failed applications of one run result before its run is ended as failed with an incident. Default `5`. */
  readonly resultAttempts: number;
  /** `OVERSEER_RESULT_RETRY_MS`: a run result read but not applied is taken again after this long. Default `2000`. */
  readonly resultRetryMs: number;
  /** `OVERSEER_FORGE_CONCURRENCY`: forge jobs (pull request work) one coordinator runs at once. Default `4`. */
  readonly forgeConcurrency: number;
  /** `OVERSEER_FORGE_RETRY_BASE_MS`: backoff unit of a forge request after a 5xx. Default `1000`. */
  readonly forgeRetryBaseMs: number;
  /** `OVERSEER_GITHUB_WRITE_INTERVAL_MS`: least ms between two GitHub writes of one token (0: no pacing). Default `1000`. */
  readonly githubWriteIntervalMs: number;
  /** `OVERSEER_DASHBOARD_URL`: the dashboard's public URL, linked from pull request bodies, no trailing slash. Default none. */
  readonly dashboardUrl: string | undefined;
  /** `OVERSEER_NOTIFY_ATTEMPTS`: attempts of one notification delivery before it is a dead letter. Default `12`. */
  readonly notifyAttempts: number;
  /** `OVERSEER_NOTIFY_BACKOFF_MS`: first wait between a delivery's attempts, doubled each time. Default `5000`. */
  readonly notifyBackoffMs: number;
  /** `OVERSEER_NOTIFY_TIMEOUT_MS`: bound on one webhook or Slack request. Default `10000`. */
  readonly notifyTimeoutMs: number;
  /** `OVERSEER_NOTIFY_CONCURRENCY`: deliveries a coordinator sends in parallel. Default `8`. */
  readonly notifyConcurrency: number;
  /** `OVERSEER_INTAKE_POLL_MS`: period of each intake source's tracker poll. Default `60000`. */
  readonly intakePollMs: number;
  /** `OVERSEER_INTAKE_CONCURRENCY`: intake jobs a coordinator runs in parallel. Default `2`. */
  readonly intakeConcurrency: number;
  /** `OVERSEER_SLACK_BOT_TOKEN`: bot token Slack notifications are posted with; "" fails them. Secret. */
  readonly slackBotToken: string;
  /** `OVERSEER_SLACK_API_URL`: Slack's Web API base. Default `https://slack.com/api/`. */
  readonly slackApiUrl: string;
  /** `OVERSEER_MIRROR_FRESH_MS`: skip the pre-checkout fetch of a new task when the mirror is this fresh. Default `5000`. */
  readonly mirrorFreshMs: number;
  /** `OVERSEER_KILL_GRACE_MS`: time between SIGTERM and SIGKILL of a run's process group. Default `5000`. */
  readonly killGraceMs: number;
  /** `OVERSEER_SHUTDOWN_GRACE_MS`: bound of a service's shutdown after SIGTERM (a worker's comes after its drain). Default `5000`. */
  readonly shutdownGraceMs: number;
  /** `OVERSEER_WORKER_DRAIN_MS`: on SIGTERM, how long running runs may finish before they are handed back. Default `30000`. */
  readonly workerDrainMs: number;
  /** `OVERSEER_FENCE_WAIT_MS`: how long a run waits for Postgres to answer its run fence before its job fails. Default `120000`. */
  readonly fenceWaitMs: number;
  /**
   * `OVERSEER_EGRESS_ALLOW_PRIVATE`: internal ranges (CIDRs) this worker's egress proxy may reach
   * for allow-listed hosts: a model gateway on 10.x, Ollama on the host. Default empty: loopback,
   * private and link-local destinations are refused. An explicit operator opt-in, logged at start.
   */
  readonly egressAllowPrivate: readonly string[];
  /** `OVERSEER_EGRESS_IDLE_TIMEOUT_MS`: an egress tunnel or forwarded request quiet both ways for this long is closed. Default `300000`. */
  readonly egressIdleTimeoutMs: number;
  /** `OVERSEER_RUN_DISK_MB`: disk a run may add to its checkout before it is stopped. Default `2048`. */
  readonly runDiskMb: number;
  /** `OVERSEER_IMAGE_CACHE_DIR`: the worker's cache of unpacked run images; null: `<dataDir>/images`. */
  readonly imageCacheDir: string | null;
  /** `OVERSEER_IMAGE_CACHE_MB`: size bound of the unpacked run images. Default `20480`. */
  readonly imageCacheMb: number;
  /** `OVERSEER_IMAGE_INSECURE_REGISTRIES`: registries pulled over plain HTTP or unverified TLS. Default empty. */
  readonly imageInsecureRegistries: readonly string[];
  /** `OVERSEER_IMAGE_TAG_TTL_MS`: how long a run image tag's digest is reused. Default `60000`. */
  readonly imageTagTtlMs: number;
  /** `OVERSEER_DISK_CHECK_MS`: pause between two disk measurements of a running run. Default `250`. */
  readonly diskCheckMs: number;
  /** `OVERSEER_RUN_MAX_FILES`: files and directories a run may add to its checkout before it is stopped. Default `100000`. */
  readonly runMaxFiles: number;
  /** `OVERSEER_GIT_TIMEOUT_MS`: bound of each host-side git step of a run (add, commit, checkout, merge). Default `120000`. */
  readonly gitTimeoutMs: number;
  /** `OVERSEER_GIT_LOCAL_PUSH_MAX_OBJECTS`: objects a push to a local remote copies itself at most; 0: always `git push`. Default `1000`. */
  readonly localPushMaxObjects: number;
  /** `OVERSEER_PROCESS_SPAWNER`: start git (and a worker's agents) through one small spawner process rather than forking the service. Default `true`. */
  readonly processSpawner: boolean;
  /** `OVERSEER_PROCESS_SPAWNER_PROGRAM`: the spawner's program, auto (Perl where found, else Node), perl or node. Default `auto`. */
  readonly processSpawnerProgram: "auto" | "perl" | "node";
  /** `OVERSEER_RUN_NICE`: niceness of the processes a worker starts for its runs (0–19; 0 keeps the worker's). Default `10`. */
  readonly runNice: number;
  /** `OVERSEER_WORKER_NICE`: niceness of the worker's own process, below the gateway and coordinator (0–19; 0 leaves it). Default `5`. */
  readonly workerNice: number;
  /** `OVERSEER_USAGE_REPORT_MS`: pause between two usage reports of a running run (`0`: only when it ends). Default `5000`. */
  readonly usageReportMs: number;
  /** `OVERSEER_CLI_RETRY_LIMIT`: retries in a row of a rate limit or an unreachable gateway, as the agent CLI reports them, after which its run is ended. Default `5`. */
  readonly cliRetryLimit: number;
  /** `OVERSEER_MAX_OUTPUT_BYTES`: run output kept per run; the rest is dropped with a marker. Default `1048576`. */
  readonly maxOutputBytes: number;
  /** `OVERSEER_MAX_TRANSCRIPT_BYTES`: a run's stored transcript (JSON); the oldest entries go first. Default `4194304`. */
  readonly maxTranscriptBytes: number;
  /** `OVERSEER_LIVE_LOG_ENTRIES`: entries of a run's live log stream in Redis (its bytes are bounded by `maxOutputBytes`). Default `256`. */
  readonly liveLogEntries: number;
  /** `OVERSEER_GATEWAY_HOST`: address the HTTP gateway listens on. Default `127.0.0.1`. */
  readonly gatewayHost: string;
  /** `OVERSEER_GATEWAY_PORT`: gateway port (`0` picks a free one). Default `7070`. */
  readonly gatewayPort: number;
  /** `OVERSEER_CORS_ORIGINS`: origins allowed cross-origin access (comma-separated). Default empty: closed. */
  readonly corsOrigins: readonly string[];
  /** `OVERSEER_RATE_LIMIT_WRITES_PER_MINUTE`: write requests per token per minute. Default `120`. */
  readonly rateLimitWritesPerMinute: number;
  /** `OVERSEER_MAX_BODY_BYTES`: largest accepted HTTP request body. Default `1048576`. */
  readonly maxBodyBytes: number;
  /** `OVERSEER_MAX_BODY_DEPTH`: deepest nesting of arrays and objects in an HTTP request body. Default `64`. */
  readonly maxBodyDepth: number;
  /** `OVERSEER_MAX_IMPORT_TASKS`: most tasks one import request or one mission plan may hold; must fit in the body limit. Default `10000`. */
  readonly maxImportTasks: number;
  /** `OVERSEER_MAX_TITLE_CHARS`: longest task title accepted by the gateway (imports, new tasks). Default `500`. */
  readonly maxTitleChars: number;
  /** `OVERSEER_MAX_OPEN_STREAMS`: SSE streams one gateway keeps open, all clients together (then 503). Default `1000`. */
  readonly maxOpenStreams: number;
  /** `OVERSEER_MAX_STREAMS_PER_TOKEN`: SSE streams one token may keep open (then 429). Default `50`. */
  readonly maxStreamsPerToken: number;
  /** `OVERSEER_MAX_STREAMS_PER_ADDRESS`: SSE streams non-admin tokens may keep open from one client address (then 429). Default `100`. */
  readonly maxStreamsPerAddress: number;
  /** `OVERSEER_STATUS_CACHE_MS`: longest reuse of a project's status answer (NOTIFY drops it at once). Default `2000`. */
  readonly statusCacheTtlMs: number;
  /** `OVERSEER_FLEET_CACHE_MS`: how long one fleet overview answer is shared by its pollers. Default `1000`. */
  readonly fleetCacheMs: number;
  /** `OVERSEER_FLEET_STALE_MS`: how much older a fleet answer may be given while it refreshes. Default `2000`. */
  readonly fleetStaleMs: number;
  /** `OVERSEER_COMPRESS_MIN_BYTES`: smallest fleet or status answer the gateway compresses. Default `1024`. */
  readonly compressMinBytes: number;
  /** `OVERSEER_ACCESS_LOG_SAMPLE`: one in this many successful fast reads gets an access log line. Default `10`. */
  readonly accessLogSample: number;
  /** `OVERSEER_ACCESS_LOG_SLOW_MS`: a read this slow always gets its access log line. Default `500`. */
  readonly accessLogSlowMs: number;
  /** `OVERSEER_BOARD_SESSION_TTL_MS`: lifetime of a Bull Board session (`/admin/queues`). Default `900000`. */
  readonly boardSessionTtlMs: number;
  /** Secret of forge webhooks (HMAC key for GitHub/Gitea, X-Gitlab-Token); "" refuses them. */
  readonly forgeWebhookSecret: string;
  /** `OVERSEER_SLACK_SIGNING_SECRET`: the Slack app's signing secret; "" refuses every click. */
  readonly slackSigningSecret: string;
  /** `OVERSEER_SLACK_OPERATORS`: Slack user id → API token id a click acts as. Default none. */
  readonly slackOperators: Readonly<Record<string, string>>;
  /** `OVERSEER_SLACK_RESPONSE_ORIGIN`: origin a click's response_url must have. Default `https://hooks.slack.com`. */
  readonly slackResponseOrigin: string;
  /** `OVERSEER_URL`: gateway URL the CLI talks to, no trailing slash. Default `http://<gateway host>:<gateway port>` (`http://127.0.0.1:7070`). */
  readonly overseerUrl: string;
  /** `OVERSEER_TOKEN`: bearer token the CLI sends. Default none. Secret: never printed. */
  readonly token: string | undefined;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One row of the configuration reference (README table). */
export interface SettingReference {
  readonly name: string;
  /** Default as shown to users; dynamic defaults are described in words. */
  readonly default: string;
  readonly description: string;
}
