import { readFileSync } from "node:fs";
import path from "node:path";
import { PROCESS_DEFAULTS } from "@overseer/process";
import { EGRESS_DEFAULTS } from "@overseer/run-contract";
import { LOGGER_DEFAULTS } from "@overseer/runtime";
import {
  CLUSTER_DEFAULTS,
  COORDINATOR_DEFAULTS,
  GATEWAY_DEFAULTS,
  loadSettings,
  QUEUE_DEFAULTS,
  RUN_FENCE_DEFAULTS,
  renderSettingsMarkdown,
  SETTINGS_REFERENCE,
  type ServiceSettings,
  WORKER_DEFAULTS,
} from "@overseer/settings";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { REPO_ROOT } from "../support/service-process.ts";

const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");

describe("README", () => {
  it("documents every service setting exactly as the code defines it", () => {
    const section = /<!-- settings:begin -->\n([\s\S]*?)\n<!-- settings:end -->/.exec(readme)?.[1];
    expect(section?.trim()).toBe(renderSettingsMarkdown().trim());
  });

  it("gives every setting's fallback from the constant its service merges its options over", () => {
    const defaults = loadSettings({});
    const rows = new Map(
      [...readme.matchAll(/^\| `([A-Z_]+)` \| ([^|]*) \|/gm)].map((m) => [m[1], (m[2] ?? "").trim()]),
    );
    for (const { name } of SETTINGS_REFERENCE) {
      if (name in WITHOUT_CONSTANT) continue;
      const entry = SETTING_CONSTANTS[name];
      expect(entry, `${name} has no constant in SETTING_CONSTANTS`).toBeDefined();
      const [key, constant] = entry as [keyof ServiceSettings, string | number | boolean | readonly string[]];
      expect(defaults[key], name).toEqual(key === "dataDir" ? path.resolve(String(constant)) : constant);
      const list = Array.isArray(constant) ? (constant as readonly string[]) : null;
      const empty =
        list?.length === 0 ||
        (list === null && typeof constant === "object" && constant !== null) ||
        constant === "";
      const shown = empty ? "(empty" : `\`${list ? list.join(",") : String(constant)}\``;
      expect(rows.get(name), name).toMatch(new RegExp(`^${shown.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    }
  });

  it("quick start has the demo and the test command that .ci/run calls", () => {
    expect(readme).toContain("npm run demo -- --once");
    expect(readme).toContain("npm test");
    expect(readFileSync(path.join(REPO_ROOT, ".ci/run"), "utf8")).toMatch(/^npm test$/m);
  });
});

describe("docker-compose.yml", () => {
  it("defines postgres and redis with health checks and the cluster services", () => {
    const compose = YAML.parse(readFileSync(path.join(REPO_ROOT, "docker-compose.yml"), "utf8"));
    for (const name of ["postgres", "redis", "coordinator", "gateway", "worker"])
      expect(compose.services[name]).toBeDefined();
    expect(compose.services.postgres.healthcheck.test).toBeDefined();
    expect(compose.services.redis.healthcheck.test).toBeDefined();
    const worker = compose.services.worker;
    expect(worker.environment.OVERSEER_SANDBOX).toBe("bwrap");
    // Runs are sandboxed by bwrap inside the worker container: no Docker socket, not privileged,
    // a seccomp profile of its own and never an unconfined one (infra/README.md).
    expect(JSON.stringify(worker.volumes ?? [])).not.toContain("docker.sock");
    expect(worker.privileged ?? false).toBe(false);
    expect(worker.security_opt).toContain("seccomp=infra/seccomp-bwrap.json");
    expect(JSON.stringify(worker.security_opt)).not.toContain("unconfined");
    expect(worker.cap_drop).toEqual(["ALL"]);
  });

  it("bounds every service container and gives the sandbox-less services least privilege", () => {
    const compose = YAML.parse(readFileSync(path.join(REPO_ROOT, "docker-compose.yml"), "utf8"), {
      merge: true,
    });
    for (const [name, service] of Object.entries<Record<string, unknown>>(compose.services)) {
      for (const key of ["pids_limit", "mem_limit", "cpus"])
        expect(service[key], `${name}.${key}`).toBeDefined();
    }
    for (const name of ["migrate", "coordinator", "gateway"]) {
      const service = compose.services[name];
      expect(service.cap_drop, name).toEqual(["ALL"]);
      expect(service.cap_add, name).toBeUndefined();
      expect(service.security_opt, name).toContain("no-new-privileges:true");
      expect(service.read_only, name).toBe(true);
    }
    expect(compose.services.worker.security_opt).toContain("no-new-privileges:true");
  });
});

/** Settings without a constant default, and why. */
const WITHOUT_CONSTANT: Readonly<Record<string, string>> = {
  OVERSEER_WORKER_ID: "the host name and process id",
  OVERSEER_EGRESS_ALLOW_PRIVATE: "empty: no internal destination",
  OVERSEER_IMAGE_CACHE_DIR: "empty: <OVERSEER_DATA_DIR>/images",
  OVERSEER_IMAGE_INSECURE_REGISTRIES: "empty: every registry over verified TLS",
  OVERSEER_URL: "made of the gateway's host and port",
  OVERSEER_DASHBOARD_URL: "none: pull request bodies name runs by id",
  OVERSEER_TOKEN: "none",
  OVERSEER_COORDINATOR_IDLE_TX_MS: "unset: OVERSEER_LEASE_TTL_MS",
};

/** Each setting with a default: the field it fills and the constant its service reads. */
const SETTING_CONSTANTS: Readonly<Record<string, readonly [keyof ServiceSettings, unknown]>> = {
  DATABASE_URL: ["databaseUrl", CLUSTER_DEFAULTS.databaseUrl],
  REDIS_URL: ["redisUrl", CLUSTER_DEFAULTS.redisUrl],
  REDIS_CLUSTER_NODES: ["redisClusterNodes", CLUSTER_DEFAULTS.redisClusterNodes],
  REDIS_SENTINELS: ["redisSentinels", CLUSTER_DEFAULTS.redisSentinels],
  REDIS_SENTINEL_MASTER: ["redisSentinelMaster", CLUSTER_DEFAULTS.redisSentinelMaster],
  OVERSEER_DATA_DIR: ["dataDir", CLUSTER_DEFAULTS.dataDir],
  OVERSEER_QUEUE_PREFIX: ["queuePrefix", QUEUE_DEFAULTS.prefix],
  LOG_LEVEL: ["logLevel", LOGGER_DEFAULTS.level],
  OVERSEER_WORKER_CONCURRENCY: ["workerConcurrency", WORKER_DEFAULTS.concurrency],
  OVERSEER_WORKER_POOLS: ["workerPools", WORKER_DEFAULTS.pools],
  OVERSEER_SANDBOX: ["sandbox", CLUSTER_DEFAULTS.sandbox],
  OVERSEER_SANDBOX_UNSAFE_NONE: ["sandboxUnsafeNone", CLUSTER_DEFAULTS.sandboxUnsafeNone],
  OVERSEER_ALLOW_UNENFORCED_LIMITS: ["allowUnenforcedLimits", CLUSTER_DEFAULTS.allowUnenforcedLimits],
  OVERSEER_LEASE_TTL_MS: ["leaseTtlMs", COORDINATOR_DEFAULTS.leaseTtlMs],
  OVERSEER_RECONCILE_INTERVAL_MS: ["reconcileIntervalMs", COORDINATOR_DEFAULTS.reconcileIntervalMs],
  OVERSEER_RECONCILE_BATCH: ["reconcileBatch", COORDINATOR_DEFAULTS.reconcileBatch],
  OVERSEER_HEARTBEAT_INTERVAL_MS: ["heartbeatIntervalMs", WORKER_DEFAULTS.heartbeatIntervalMs],
  OVERSEER_JOB_ATTEMPTS: ["jobAttempts", QUEUE_DEFAULTS.infraAttempts],
  OVERSEER_RETRY_BACKOFF_MS: ["retryBackoffMs", QUEUE_DEFAULTS.infraBackoffMs],
  OVERSEER_WORKER_LOCK_MS: ["workerLockMs", WORKER_DEFAULTS.lockDurationMs],
  OVERSEER_WORKER_LOCK_RENEW_MS: ["workerLockRenewMs", WORKER_DEFAULTS.lockRenewMs],
  OVERSEER_STALLED_INTERVAL_MS: ["stalledIntervalMs", WORKER_DEFAULTS.stalledIntervalMs],
  OVERSEER_MAX_STALLED_COUNT: ["maxStalledCount", WORKER_DEFAULTS.maxStalledCount],
  OVERSEER_RESULT_CONCURRENCY: ["resultConcurrency", COORDINATOR_DEFAULTS.resultConcurrency],
  OVERSEER_RESULT_ATTEMPTS: ["resultAttempts", COORDINATOR_DEFAULTS.resultAttempts],
  OVERSEER_RESULT_RETRY_MS: ["resultRetryMs", COORDINATOR_DEFAULTS.resultRetryMs],
  OVERSEER_FORGE_CONCURRENCY: ["forgeConcurrency", COORDINATOR_DEFAULTS.forgeConcurrency],
  OVERSEER_FORGE_RETRY_BASE_MS: ["forgeRetryBaseMs", COORDINATOR_DEFAULTS.forgeRetryBaseMs],
  OVERSEER_GITHUB_WRITE_INTERVAL_MS: ["githubWriteIntervalMs", COORDINATOR_DEFAULTS.githubWriteIntervalMs],
  OVERSEER_NOTIFY_ATTEMPTS: ["notifyAttempts", COORDINATOR_DEFAULTS.notifyAttempts],
  OVERSEER_NOTIFY_BACKOFF_MS: ["notifyBackoffMs", COORDINATOR_DEFAULTS.notifyBackoffMs],
  OVERSEER_NOTIFY_TIMEOUT_MS: ["notifyTimeoutMs", COORDINATOR_DEFAULTS.notifyTimeoutMs],
  OVERSEER_SLACK_BOT_TOKEN: ["slackBotToken", COORDINATOR_DEFAULTS.slackBotToken],
  OVERSEER_SLACK_API_URL: ["slackApiUrl", COORDINATOR_DEFAULTS.slackApiUrl],
  OVERSEER_NOTIFY_CONCURRENCY: ["notifyConcurrency", COORDINATOR_DEFAULTS.notifyConcurrency],
  OVERSEER_INTAKE_POLL_MS: ["intakePollMs", COORDINATOR_DEFAULTS.intakePollMs],
  OVERSEER_INTAKE_CONCURRENCY: ["intakeConcurrency", COORDINATOR_DEFAULTS.intakeConcurrency],
  OVERSEER_MIRROR_FRESH_MS: ["mirrorFreshMs", WORKER_DEFAULTS.mirrorFreshMs],
  OVERSEER_KILL_GRACE_MS: ["killGraceMs", WORKER_DEFAULTS.killGraceMs],
  OVERSEER_SHUTDOWN_GRACE_MS: ["shutdownGraceMs", COORDINATOR_DEFAULTS.shutdownGraceMs],
  OVERSEER_WORKER_DRAIN_MS: ["workerDrainMs", WORKER_DEFAULTS.drainMs],
  OVERSEER_FENCE_WAIT_MS: ["fenceWaitMs", RUN_FENCE_DEFAULTS.waitMs],
  OVERSEER_EGRESS_IDLE_TIMEOUT_MS: ["egressIdleTimeoutMs", EGRESS_DEFAULTS.idleTimeoutMs],
  OVERSEER_RUN_DISK_MB: ["runDiskMb", WORKER_DEFAULTS.diskLimitBytes / 1024 / 1024],
  OVERSEER_IMAGE_CACHE_MB: ["imageCacheMb", WORKER_DEFAULTS.imageCacheBytes / 1024 / 1024],
  OVERSEER_IMAGE_TAG_TTL_MS: ["imageTagTtlMs", WORKER_DEFAULTS.imageTagTtlMs],
  OVERSEER_DISK_CHECK_MS: ["diskCheckMs", WORKER_DEFAULTS.diskCheckMs],
  OVERSEER_RUN_MAX_FILES: ["runMaxFiles", WORKER_DEFAULTS.maxFiles],
  OVERSEER_GIT_TIMEOUT_MS: ["gitTimeoutMs", WORKER_DEFAULTS.gitTimeoutMs],
  OVERSEER_GIT_LOCAL_PUSH_MAX_OBJECTS: ["localPushMaxObjects", WORKER_DEFAULTS.localPushMaxObjects],
  OVERSEER_PROCESS_SPAWNER: ["processSpawner", PROCESS_DEFAULTS.spawner],
  OVERSEER_PROCESS_SPAWNER_PROGRAM: ["processSpawnerProgram", PROCESS_DEFAULTS.spawnerProgram],
  OVERSEER_RUN_NICE: ["runNice", PROCESS_DEFAULTS.runNice],
  OVERSEER_WORKER_NICE: ["workerNice", WORKER_DEFAULTS.workerNice],
  OVERSEER_USAGE_REPORT_MS: ["usageReportMs", WORKER_DEFAULTS.usageReportMs],
  OVERSEER_CLI_RETRY_LIMIT: ["cliRetryLimit", WORKER_DEFAULTS.cliRetryLimit],
  OVERSEER_MAX_OUTPUT_BYTES: ["maxOutputBytes", WORKER_DEFAULTS.maxOutputBytes],
  OVERSEER_MAX_TRANSCRIPT_BYTES: ["maxTranscriptBytes", WORKER_DEFAULTS.maxTranscriptBytes],
  OVERSEER_LIVE_LOG_ENTRIES: ["liveLogEntries", QUEUE_DEFAULTS.maxLogEntries],
  OVERSEER_GATEWAY_HOST: ["gatewayHost", GATEWAY_DEFAULTS.host],
  OVERSEER_GATEWAY_PORT: ["gatewayPort", GATEWAY_DEFAULTS.port],
  OVERSEER_CORS_ORIGINS: ["corsOrigins", GATEWAY_DEFAULTS.corsOrigins],
  OVERSEER_RATE_LIMIT_WRITES_PER_MINUTE: [
    "rateLimitWritesPerMinute",
    GATEWAY_DEFAULTS.rateLimitWritesPerMinute,
  ],
  OVERSEER_MAX_BODY_BYTES: ["maxBodyBytes", GATEWAY_DEFAULTS.maxBodyBytes],
  OVERSEER_MAX_BODY_DEPTH: ["maxBodyDepth", GATEWAY_DEFAULTS.maxBodyDepth],
  OVERSEER_MAX_IMPORT_TASKS: ["maxImportTasks", GATEWAY_DEFAULTS.maxImportTasks],
  OVERSEER_MAX_TITLE_CHARS: ["maxTitleChars", GATEWAY_DEFAULTS.maxTitleChars],
  OVERSEER_MAX_OPEN_STREAMS: ["maxOpenStreams", GATEWAY_DEFAULTS.maxOpenStreams],
  OVERSEER_MAX_STREAMS_PER_TOKEN: ["maxStreamsPerToken", GATEWAY_DEFAULTS.maxStreamsPerToken],
  OVERSEER_MAX_STREAMS_PER_ADDRESS: ["maxStreamsPerAddress", GATEWAY_DEFAULTS.maxStreamsPerAddress],
  OVERSEER_BOARD_SESSION_TTL_MS: ["boardSessionTtlMs", GATEWAY_DEFAULTS.boardSessionTtlMs],
  OVERSEER_STATUS_CACHE_MS: ["statusCacheTtlMs", GATEWAY_DEFAULTS.statusCacheTtlMs],
  OVERSEER_FLEET_CACHE_MS: ["fleetCacheMs", GATEWAY_DEFAULTS.fleetCacheMs],
  OVERSEER_FLEET_STALE_MS: ["fleetStaleMs", GATEWAY_DEFAULTS.fleetStaleMs],
  OVERSEER_COMPRESS_MIN_BYTES: ["compressMinBytes", GATEWAY_DEFAULTS.compressMinBytes],
  OVERSEER_ACCESS_LOG_SAMPLE: ["accessLogSample", GATEWAY_DEFAULTS.accessLogSample],
  OVERSEER_ACCESS_LOG_SLOW_MS: ["accessLogSlowMs", GATEWAY_DEFAULTS.accessLogSlowMs],
  OVERSEER_FORGE_WEBHOOK_SECRET: ["forgeWebhookSecret", GATEWAY_DEFAULTS.forgeWebhookSecret],
  OVERSEER_SLACK_SIGNING_SECRET: ["slackSigningSecret", GATEWAY_DEFAULTS.slackSigningSecret],
  OVERSEER_SLACK_OPERATORS: ["slackOperators", GATEWAY_DEFAULTS.slackOperators],
  OVERSEER_SLACK_RESPONSE_ORIGIN: ["slackResponseOrigin", GATEWAY_DEFAULTS.slackResponseOrigin],
};
