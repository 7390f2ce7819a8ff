import path from "node:path";
import { ConfigError } from "@overseer/input-errors";
import { describe, expect, it } from "vitest";
import {
  loadSettings,
  renderSettingsMarkdown,
  SETTINGS_REFERENCE,
  type ServiceSettings,
} from "../src/index.ts";

function settingsError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadSettings(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected loadSettings to throw");
}

/** [variable, settings field, default, a bad value, words the expected part must contain] */
const TABLE: [string, keyof ServiceSettings, unknown, string, string][] = [
  [
    "DATABASE_URL",
    "databaseUrl",
    "postgres://postgres@127.0.0.1:5432/overseer",
    "mysql://h/db",
    "postgres://",
  ],
  ["REDIS_URL", "redisUrl", "redis://127.0.0.1:6379", "http://127.0.0.1:6379", "redis://"],
  ["REDIS_CLUSTER_NODES", "redisClusterNodes", [], "redis-1", "host:port"],
  ["REDIS_SENTINELS", "redisSentinels", [], "sentinel-1:99999", "host:port"],
  ["REDIS_SENTINEL_MASTER", "redisSentinelMaster", "mymaster", "my master", "letters"],
  ["OVERSEER_DATA_DIR", "dataDir", path.resolve("./.overseer-data"), "bad\0dir", "directory"],
  ["OVERSEER_QUEUE_PREFIX", "queuePrefix", "overseer", "bull:overseer", "no colon"],
  ["LOG_LEVEL", "logLevel", "info", "loud", "one of fatal, error, warn, info"],
  ["OVERSEER_WORKER_CONCURRENCY", "workerConcurrency", 2, "0", "an integer from 1 to 256"],
  [
    "OVERSEER_WORKER_ID",
    "workerId",
    expect.stringMatching(new RegExp(`-${process.pid}$`)),
    "has space",
    "letters",
  ],
  ["OVERSEER_WORKER_POOLS", "workerPools", ["default"], "gpu,Bad Pool", "a pool name"],
  ["OVERSEER_SANDBOX", "sandbox", "bwrap", "docker", "one of bwrap, gvisor, none"],
  ["OVERSEER_SANDBOX_UNSAFE_NONE", "sandboxUnsafeNone", false, "on", "one of 1, 0, true, false, yes, no"],
  [
    "OVERSEER_ALLOW_UNENFORCED_LIMITS",
    "allowUnenforcedLimits",
    false,
    "sometimes",
    "one of 1, 0, true, false, yes, no",
  ],
  ["OVERSEER_LEASE_TTL_MS", "leaseTtlMs", 15000, "999", "an integer from 1000"],
  ["OVERSEER_COORDINATOR_IDLE_TX_MS", "coordinatorIdleTxMs", undefined, "10s", "an integer from 100"],
  ["OVERSEER_RECONCILE_INTERVAL_MS", "reconcileIntervalMs", 5000, "-5", "an integer from 100"],
  ["OVERSEER_RECONCILE_BATCH", "reconcileBatch", 500, "0", "an integer from 1 to 100000"],
  ["OVERSEER_HEARTBEAT_INTERVAL_MS", "heartbeatIntervalMs", 5000, "5s", "an integer from 100"],
  ["OVERSEER_JOB_ATTEMPTS", "jobAttempts", 3, "0", "an integer from 1 to 100"],
  ["OVERSEER_RETRY_BACKOFF_MS", "retryBackoffMs", 1000, "1e3", "an integer from 0"],
  ["OVERSEER_WORKER_LOCK_MS", "workerLockMs", 30000, "0", "an integer from 1000"],
  ["OVERSEER_WORKER_LOCK_RENEW_MS", "workerLockRenewMs", 10000, "50", "an integer from 100"],
  ["OVERSEER_STALLED_INTERVAL_MS", "stalledIntervalMs", 5000, "10", "an integer from 500"],
  ["OVERSEER_MAX_STALLED_COUNT", "maxStalledCount", 3, "0", "an integer from 1"],
  ["OVERSEER_RESULT_CONCURRENCY", "resultConcurrency", 8, "-1", "an integer from 1"],
  ["OVERSEER_RESULT_ATTEMPTS", "resultAttempts", 5, "0", "an integer from 1"],
  ["OVERSEER_RESULT_RETRY_MS", "resultRetryMs", 2000, "10", "an integer from 100"],
  ["OVERSEER_FORGE_CONCURRENCY", "forgeConcurrency", 4, "0", "an integer from 1 to 256"],
  ["OVERSEER_FORGE_RETRY_BASE_MS", "forgeRetryBaseMs", 1000, "-1", "an integer from 0"],
  ["OVERSEER_GITHUB_WRITE_INTERVAL_MS", "githubWriteIntervalMs", 1000, "-1", "an integer from 0"],
  ["OVERSEER_DASHBOARD_URL", "dashboardUrl", undefined, "ftp://example.com", "http:// or https://"],
  ["OVERSEER_NOTIFY_ATTEMPTS", "notifyAttempts", 12, "0", "an integer from 1"],
  ["OVERSEER_NOTIFY_BACKOFF_MS", "notifyBackoffMs", 5000, "-1", "an integer from 0"],
  ["OVERSEER_NOTIFY_TIMEOUT_MS", "notifyTimeoutMs", 10000, "5", "an integer from 100"],
  ["OVERSEER_NOTIFY_CONCURRENCY", "notifyConcurrency", 8, "0", "an integer from 1"],
  ["OVERSEER_INTAKE_POLL_MS", "intakePollMs", 60000, "10", "an integer from 1000"],
  ["OVERSEER_INTAKE_CONCURRENCY", "intakeConcurrency", 2, "0", "an integer from 1"],
  ["OVERSEER_SLACK_BOT_TOKEN", "slackBotToken", "", "x".repeat(513), "at most 512 characters"],
  ["OVERSEER_SLACK_API_URL", "slackApiUrl", "https://slack.com/api/", "slack.com/api", "http:// or https://"],
  ["OVERSEER_MIRROR_FRESH_MS", "mirrorFreshMs", 5000, "-1", "an integer from 0"],
  ["OVERSEER_KILL_GRACE_MS", "killGraceMs", 5000, "1.5", "an integer from 0"],
  ["OVERSEER_SHUTDOWN_GRACE_MS", "shutdownGraceMs", 5000, "50", "an integer from 100 to 600000"],
  ["OVERSEER_WORKER_DRAIN_MS", "workerDrainMs", 30000, "-5", "an integer from 0"],
  ["OVERSEER_FENCE_WAIT_MS", "fenceWaitMs", 120000, "-5", "an integer from 0"],
  ["OVERSEER_EGRESS_ALLOW_PRIVATE", "egressAllowPrivate", [], "10.0.0.0/99", "CIDRs"],
  ["OVERSEER_EGRESS_IDLE_TIMEOUT_MS", "egressIdleTimeoutMs", 300000, "999", "an integer from 1000"],
  ["OVERSEER_RUN_DISK_MB", "runDiskMb", 2048, "0", "an integer from 1"],
  ["OVERSEER_IMAGE_CACHE_DIR", "imageCacheDir", null, "bad\0dir", "directory"],
  ["OVERSEER_IMAGE_CACHE_MB", "imageCacheMb", 20480, "0", "an integer from 1"],
  ["OVERSEER_IMAGE_INSECURE_REGISTRIES", "imageInsecureRegistries", [], "http://x", "host:port"],
  ["OVERSEER_IMAGE_TAG_TTL_MS", "imageTagTtlMs", 60000, "-1", "an integer from 0"],
  ["OVERSEER_DISK_CHECK_MS", "diskCheckMs", 250, "5", "an integer from 10"],
  ["OVERSEER_RUN_MAX_FILES", "runMaxFiles", 100000, "0", "an integer from 1"],
  ["OVERSEER_GIT_TIMEOUT_MS", "gitTimeoutMs", 120000, "999", "an integer from 1000"],
  ["OVERSEER_GIT_LOCAL_PUSH_MAX_OBJECTS", "localPushMaxObjects", 1000, "-1", "an integer from 0"],
  ["OVERSEER_PROCESS_SPAWNER", "processSpawner", true, "maybe", "one of 1, 0, true, false, yes, no"],
  ["OVERSEER_PROCESS_SPAWNER_PROGRAM", "processSpawnerProgram", "auto", "python", "one of auto, perl, node"],
  ["OVERSEER_RUN_NICE", "runNice", 10, "20", "an integer from 0 to 19"],
  ["OVERSEER_WORKER_NICE", "workerNice", 10, "20", "an integer from 0 to 19"],
  ["OVERSEER_USAGE_REPORT_MS", "usageReportMs", 5000, "-1", "an integer from 0"],
  ["OVERSEER_CLI_RETRY_LIMIT", "cliRetryLimit", 5, "0", "an integer from 1 to 1000"],
  ["OVERSEER_MAX_OUTPUT_BYTES", "maxOutputBytes", 1048576, "10", "an integer from 1024"],
  ["OVERSEER_MAX_TRANSCRIPT_BYTES", "maxTranscriptBytes", 4194304, "10", "an integer from 1024"],
  ["OVERSEER_LIVE_LOG_ENTRIES", "liveLogEntries", 256, "0", "an integer from 1"],
  ["OVERSEER_GATEWAY_HOST", "gatewayHost", "127.0.0.1", "http://x/", "host name or IP"],
  ["OVERSEER_GATEWAY_PORT", "gatewayPort", 7070, "65536", "an integer from 0 to 65535"],
  ["OVERSEER_CORS_ORIGINS", "corsOrigins", [], "example.com", "origins"],
  ["OVERSEER_RATE_LIMIT_WRITES_PER_MINUTE", "rateLimitWritesPerMinute", 120, "0", "an integer from 1"],
  ["OVERSEER_MAX_BODY_BYTES", "maxBodyBytes", 1048576, "100", "an integer from 1024"],
  ["OVERSEER_MAX_BODY_DEPTH", "maxBodyDepth", 64, "1", "an integer from 2"],
  ["OVERSEER_MAX_IMPORT_TASKS", "maxImportTasks", 10000, "0", "an integer from 1"],
  ["OVERSEER_MAX_TITLE_CHARS", "maxTitleChars", 500, "0", "an integer from 1"],
  ["OVERSEER_MAX_OPEN_STREAMS", "maxOpenStreams", 1000, "0", "an integer from 1"],
  ["OVERSEER_MAX_STREAMS_PER_TOKEN", "maxStreamsPerToken", 50, "0x10", "an integer from 1"],
  ["OVERSEER_MAX_STREAMS_PER_ADDRESS", "maxStreamsPerAddress", 100, "-1", "an integer from 1"],
  ["OVERSEER_STATUS_CACHE_MS", "statusCacheTtlMs", 2000, "-1", "an integer from 0"],
  ["OVERSEER_FLEET_CACHE_MS", "fleetCacheMs", 1000, "1.5", "an integer from 0"],
  ["OVERSEER_FLEET_STALE_MS", "fleetStaleMs", 2000, "soon", "an integer from 0"],
  ["OVERSEER_COMPRESS_MIN_BYTES", "compressMinBytes", 1024, "-1", "an integer from 0"],
  ["OVERSEER_ACCESS_LOG_SAMPLE", "accessLogSample", 10, "0", "an integer from 1"],
  ["OVERSEER_ACCESS_LOG_SLOW_MS", "accessLogSlowMs", 500, "fast", "an integer from 0"],
  ["OVERSEER_BOARD_SESSION_TTL_MS", "boardSessionTtlMs", 900000, "10", "an integer from 1000"],
  ["OVERSEER_FORGE_WEBHOOK_SECRET", "forgeWebhookSecret", "", "x".repeat(257), "at most 256 characters"],
  ["OVERSEER_SLACK_SIGNING_SECRET", "slackSigningSecret", "", "x".repeat(257), "at most 256 characters"],
  ["OVERSEER_SLACK_OPERATORS", "slackOperators", {}, "alice", "<Slack user id>=<API token id>"],
  [
    "OVERSEER_SLACK_RESPONSE_ORIGIN",
    "slackResponseOrigin",
    "https://hooks.slack.com",
    "hooks.slack.com",
    "http:// or https://",
  ],
  ["OVERSEER_URL", "overseerUrl", "http://127.0.0.1:7070", "ftp://example.com", "http:// or https://"],
  ["OVERSEER_TOKEN", "token", undefined, "two words", "without whitespace"],
];

describe("loadSettings", () => {
  it("succeeds on an empty environment with the documented defaults", () => {
    const settings = loadSettings({});
    for (const [, field, expected] of TABLE) expect(settings[field], field).toEqual(expected);
    expect(Object.isFrozen(settings)).toBe(true);
  });

  it.each(TABLE)(
    "%s: rejects a bad value naming the variable, expected and received",
    (name, _f, _d, bad, words) => {
      const error = settingsError({ [name]: bad });
      expect(error.name).toBe("ConfigError");
      expect(error.source).toBe("environment");
      expect(error.issues).toHaveLength(1);
      const issue = error.issues[0];
      expect(issue?.path).toBe(name);
      expect(issue?.expected).toContain(words);
      expect(error.message).toContain(`environment: ${name}: expected `);
    },
  );

  it("reports every bad variable at once", () => {
    const env = Object.fromEntries(TABLE.map(([name, , , bad]) => [name, bad]));
    const error = settingsError(env);
    expect(error.issues.map((i) => i.path).sort()).toEqual(TABLE.map(([name]) => name).sort());
    for (const [name] of TABLE) expect(error.message).toContain(`${name}: expected`);
  });

  it("echoes received values but never the token, and masks URL passwords", () => {
    const error = settingsError({
      OVERSEER_WORKER_CONCURRENCY: "lots",
      OVERSEER_TOKEN: "ovr secret-token-value",
      DATABASE_URL: "mysql://admin:hunter2pass@db/overseer",
    });
    expect(error.message).toContain('received "lots"');
    expect(error.message).not.toContain("secret-token-value");
    expect(error.message).toContain("(secret, hidden)");
    expect(error.message).not.toContain("hunter2pass");
    expect(error.message).toContain("mysql://admin:[REDACTED]@db/overseer");
  });

  it("reads Redis Cluster nodes and Sentinels as host:port lists, never both", () => {
    const cluster = loadSettings({ REDIS_CLUSTER_NODES: " redis-1:7000, 10.0.0.2:7001 ,[::1]:7002" });
    expect(cluster.redisClusterNodes).toEqual(["redis-1:7000", "10.0.0.2:7001", "[::1]:7002"]);
    const sentinel = loadSettings({ REDIS_SENTINELS: "s1:26379,s2:26379", REDIS_SENTINEL_MASTER: "main-1" });
    expect(sentinel.redisSentinels).toEqual(["s1:26379", "s2:26379"]);
    expect(sentinel.redisSentinelMaster).toBe("main-1");
    const error = settingsError({ REDIS_CLUSTER_NODES: "r1:7000", REDIS_SENTINELS: "s1:26379" });
    expect(error.issues.map((i) => i.path)).toEqual(["REDIS_SENTINELS"]);
    expect(error.message).toContain("unset while REDIS_CLUSTER_NODES is set");
  });

  it("treats empty and blank values as unset and trims the rest", () => {
    const settings = loadSettings({
      OVERSEER_WORKER_CONCURRENCY: "",
      LOG_LEVEL: "  ",
      OVERSEER_GATEWAY_PORT: " 8080 ",
    });
    expect(settings.workerConcurrency).toBe(2);
    expect(settings.logLevel).toBe("info");
    expect(settings.gatewayPort).toBe(8080);
  });

  it("accepts exactly 1/0/true/false/yes/no as booleans, in any case", () => {
    for (const [raw, value] of [
      ["1", true],
      ["0", false],
      ["true", true],
      ["FALSE", false],
      ["Yes", true],
      ["no", false],
    ] as const) {
      expect(loadSettings({ OVERSEER_SANDBOX_UNSAFE_NONE: raw }).sandboxUnsafeNone, raw).toBe(value);
    }
    for (const raw of ["on", "off", "2", "y", "t"]) {
      expect(settingsError({ OVERSEER_SANDBOX_UNSAFE_NONE: raw }).issues[0]?.path).toBe(
        "OVERSEER_SANDBOX_UNSAFE_NONE",
      );
    }
  });

  it("parses integers strictly", () => {
    expect(loadSettings({ OVERSEER_JOB_ATTEMPTS: "100" }).jobAttempts).toBe(100);
    for (const raw of ["101", "0x10", "3.0", "+3", "3 4", "99999999999999999999"]) {
      expect(settingsError({ OVERSEER_JOB_ATTEMPTS: raw }).issues[0]?.received).toBe(JSON.stringify(raw));
    }
  });

  it("accepts the non-default forms of each variable", () => {
    const settings = loadSettings({
      DATABASE_URL: "postgresql://u:p@db:5433/x",
      REDIS_URL: "rediss://cache:6380/2",
      OVERSEER_DATA_DIR: "relative/data",
      OVERSEER_WORKER_ID: "worker-a.1",
      OVERSEER_SANDBOX: "none",
      OVERSEER_SANDBOX_UNSAFE_NONE: "1",
      OVERSEER_CORS_ORIGINS: "https://app.example.com, http://localhost:5173/",
      OVERSEER_TOKEN: "ovr_abcdefghijklmnopqrstuvwxyz",
      OVERSEER_URL: "https://overseer.example.com/",
    });
    expect(settings.databaseUrl).toBe("postgresql://u:p@db:5433/x");
    expect(settings.redisUrl).toBe("rediss://cache:6380/2");
    expect(settings.dataDir).toBe(path.resolve("relative/data"));
    expect(path.isAbsolute(settings.dataDir)).toBe(true);
    expect(settings.workerId).toBe("worker-a.1");
    expect(settings.sandbox).toBe("none");
    expect(settings.corsOrigins).toEqual(["https://app.example.com", "http://localhost:5173"]);
    expect(settings.token).toBe("ovr_abcdefghijklmnopqrstuvwxyz");
    expect(settings.overseerUrl).toBe("https://overseer.example.com");
    expect(loadSettings({ OVERSEER_CORS_ORIGINS: "*" }).corsOrigins).toEqual(["*"]);
    expect(settingsError({ OVERSEER_CORS_ORIGINS: "*,https://a.example" }).issues[0]?.path).toBe(
      "OVERSEER_CORS_ORIGINS",
    );
    expect(settingsError({ OVERSEER_CORS_ORIGINS: "https://a.example/path" }).issues[0]?.path).toBe(
      "OVERSEER_CORS_ORIGINS",
    );
  });

  it("derives OVERSEER_URL from the gateway host and port when unset", () => {
    expect(loadSettings({ OVERSEER_GATEWAY_PORT: "9090" }).overseerUrl).toBe("http://127.0.0.1:9090");
    expect(loadSettings({ OVERSEER_GATEWAY_HOST: "0.0.0.0" }).overseerUrl).toBe("http://127.0.0.1:7070");
    expect(loadSettings({ OVERSEER_GATEWAY_HOST: "gw.internal" }).overseerUrl).toBe(
      "http://gw.internal:7070",
    );
    expect(loadSettings({ OVERSEER_GATEWAY_HOST: "::1" }).overseerUrl).toBe("http://[::1]:7070");
  });

  it("requires the heartbeat to be shorter than the lease", () => {
    const error = settingsError({ OVERSEER_LEASE_TTL_MS: "4000" });
    expect(error.issues).toEqual([
      expect.objectContaining({ path: "OVERSEER_HEARTBEAT_INTERVAL_MS", received: "5000" }),
    ]);
    expect(error.issues[0]?.expected).toContain("OVERSEER_LEASE_TTL_MS (4000)");
    expect(
      loadSettings({ OVERSEER_LEASE_TTL_MS: "4000", OVERSEER_HEARTBEAT_INTERVAL_MS: "1000" }).leaseTtlMs,
    ).toBe(4000);
  });

  it("bounds a coordinator's idle transaction by the lease TTL", () => {
    const error = settingsError({ OVERSEER_COORDINATOR_IDLE_TX_MS: "20000" });
    expect(error.issues).toEqual([
      expect.objectContaining({ path: "OVERSEER_COORDINATOR_IDLE_TX_MS", received: "20000" }),
    ]);
    expect(error.issues[0]?.expected).toContain("OVERSEER_LEASE_TTL_MS (15000)");
    expect(loadSettings({ OVERSEER_COORDINATOR_IDLE_TX_MS: "15000" }).coordinatorIdleTxMs).toBe(15000);
  });

  it("requires job locks to be renewed more often than they lapse", () => {
    const error = settingsError({ OVERSEER_WORKER_LOCK_MS: "1500" });
    expect(error.issues).toEqual([
      expect.objectContaining({ path: "OVERSEER_WORKER_LOCK_RENEW_MS", received: "10000" }),
    ]);
    expect(error.issues[0]?.expected).toContain("OVERSEER_WORKER_LOCK_MS (1500)");
    const settings = loadSettings({ OVERSEER_WORKER_LOCK_MS: "1500", OVERSEER_WORKER_LOCK_RENEW_MS: "400" });
    expect([settings.workerLockMs, settings.workerLockRenewMs]).toEqual([1500, 400]);
  });

  it("requires a full task import to fit in the body limit (the defaults do)", () => {
    const defaults = loadSettings({});
    expect(defaults.maxImportTasks * 32).toBeLessThanOrEqual(defaults.maxBodyBytes);
    const error = settingsError({ OVERSEER_MAX_IMPORT_TASKS: "50000" });
    expect(error.issues).toEqual([
      expect.objectContaining({ path: "OVERSEER_MAX_IMPORT_TASKS", received: "50000" }),
    ]);
    expect(error.issues[0]?.expected).toContain("at most 32768 tasks");
    expect(
      loadSettings({ OVERSEER_MAX_IMPORT_TASKS: "50000", OVERSEER_MAX_BODY_BYTES: "2000000" }).maxImportTasks,
    ).toBe(50_000);
  });

  it("refuses the none sandbox unless the unsafe flag is set", () => {
    const error = settingsError({ OVERSEER_SANDBOX: "none" });
    expect(error.issues[0]?.path).toBe("OVERSEER_SANDBOX");
    expect(error.issues[0]?.expected).toContain("OVERSEER_SANDBOX_UNSAFE_NONE=true");
    const settings = loadSettings({ OVERSEER_SANDBOX: "none", OVERSEER_SANDBOX_UNSAFE_NONE: "yes" });
    expect(settings.sandbox).toBe("none");
    expect(settings.sandboxUnsafeNone).toBe(true);
  });

  it("reads process.env by default", () => {
    expect(loadSettings().queuePrefix).toBe(process.env.OVERSEER_QUEUE_PREFIX?.trim() || "overseer");
  });
});

describe("SETTINGS_REFERENCE", () => {
  it("lists every variable once, each with a default and a description", () => {
    expect(SETTINGS_REFERENCE.map((s) => s.name)).toEqual(TABLE.map(([name]) => name));
    for (const s of SETTINGS_REFERENCE) {
      expect(s.default, s.name).not.toBe("");
      expect(s.description.length, s.name).toBeGreaterThan(10);
    }
  });

  it("states the real defaults: setting a variable to its documented literal default changes nothing", () => {
    const defaults = loadSettings({});
    for (const s of SETTINGS_REFERENCE) {
      if (/[(<]/.test(s.default)) continue; // described in words, not a literal
      expect(loadSettings({ [s.name]: s.default }), s.name).toEqual(defaults);
    }
  });
});

describe("renderSettingsMarkdown", () => {
  it("renders a markdown table with one row per variable", () => {
    const markdown = renderSettingsMarkdown();
    const lines = markdown.trimEnd().split("\n");
    expect(lines[0]).toBe("| Variable | Default | Description |");
    expect(lines[1]).toBe("| --- | --- | --- |");
    expect(lines).toHaveLength(2 + SETTINGS_REFERENCE.length);
    expect(markdown).toContain("| `OVERSEER_WORKER_CONCURRENCY` | `2` |");
    expect(markdown).toContain("| `OVERSEER_TOKEN` | (none) |");
    for (const line of lines) expect(line.split(/(?<!\\)\|/)).toHaveLength(5);
  });

  it("escapes pipes inside cells", () => {
    const markdown = renderSettingsMarkdown([{ name: "X", default: "a|b", description: "one | two" }]);
    expect(markdown.split("\n")[2]).toBe("| `X` | `a\\|b` | one \\| two |");
  });
});
