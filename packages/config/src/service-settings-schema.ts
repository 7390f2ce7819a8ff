import os from "node:os";
import path from "node:path";
import type { ConfigIssue } from "@overseer/input-errors";
import { describeReceived, expectedErrorMap } from "@overseer/input-errors";
import { PROCESS_DEFAULTS } from "@overseer/process";
import { SANDBOX_DRIVER_NAMES, type SandboxDriverName } from "@overseer/sandbox";
import { parseCidr } from "@overseer/sandbox/egress-host-rule";
import { z } from "zod";
import { ConfigError } from "./config-error.ts";
import { DEFAULT_MAX_IMPORT_TASKS } from "./import-limits.ts";
import { QUEUE_DEFAULTS } from "./queue-defaults.ts";
import { DEFAULT_MAX_TITLE_CHARS } from "./task-limits.ts";

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
  /** `OVERSEER_SANDBOX`: default sandbox driver for runs. Default `bwrap`. */
  readonly sandbox: SandboxDriverName;
  /** `OVERSEER_SANDBOX_UNSAFE_NONE`: allow the `none` driver (no isolation). Default `false`. */
  readonly sandboxUnsafeNone: boolean;
  /** `OVERSEER_LEASE_TTL_MS`: project ownership lease lifetime; a dead owner is replaced after this. Default `15000`. */
  readonly leaseTtlMs: number;
  /** `OVERSEER_RECONCILE_INTERVAL_MS`: how often the coordinator re-reads Postgres and repairs queues. Default `5000`. */
  readonly reconcileIntervalMs: number;
  /** `OVERSEER_HEARTBEAT_INTERVAL_MS`: how often leases and worker heartbeats are renewed; below the lease TTL. Default `5000`. */
  readonly heartbeatIntervalMs: number;
  /** `OVERSEER_JOB_ATTEMPTS`: default attempts per failing run before a remediation is created. Default `3`. */
  readonly jobAttempts: number;
  /** `OVERSEER_RETRY_BACKOFF_MS`: base delay before a failed run is retried. Default `1000`. */
  readonly retryBackoffMs: number;
  /** `OVERSEER_WORKER_LOCK_MS`: job lock a worker renews while a run lasts; redelivery after a worker death waits for it to lapse. Default `6000`. */
  readonly workerLockMs: number;
  /** `OVERSEER_WORKER_LOCK_RENEW_MS`: how often a worker renews the locks of its running jobs; below the lock. Default `1500`. */
  readonly workerLockRenewMs: number;
  /** `OVERSEER_STALLED_INTERVAL_MS`: how often workers check for jobs of dead workers. Default `1000`. */
  readonly stalledIntervalMs: number;
  /** `OVERSEER_MAX_STALLED_COUNT`: redeliveries after worker deaths before the run is failed. Default `3`. */
  readonly maxStalledCount: number;
  /** `OVERSEER_RESULT_CONCURRENCY`: run results a coordinator applies in parallel. Default `8`. */
  readonly resultConcurrency: number;
  /** `OVERSEER_RESULT_ATTEMPTS`: failed applications of one run result before its run is ended as failed with an incident. Default `5`. */
  readonly resultAttempts: number;
  /** `OVERSEER_MIRROR_FRESH_MS`: skip the pre-checkout fetch of a new task when the mirror is this fresh. Default `5000`. */
  readonly mirrorFreshMs: number;
  /** `OVERSEER_KILL_GRACE_MS`: time between SIGTERM and SIGKILL of a run's process group. Default `5000`. */
  readonly killGraceMs: number;
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
  /** `OVERSEER_DISK_CHECK_MS`: pause between two disk measurements of a running run. Default `250`. */
  readonly diskCheckMs: number;
  /** `OVERSEER_RUN_MAX_FILES`: files and directories a run may add to its checkout before it is stopped. Default `100000`. */
  readonly runMaxFiles: number;
  /** `OVERSEER_GIT_TIMEOUT_MS`: bound of each host-side git step of a run (add, commit, checkout, merge). Default `120000`. */
  readonly gitTimeoutMs: number;
  /** `OVERSEER_MAX_OUTPUT_BYTES`: run output kept per run; the rest is dropped with a marker. Default `1048576`. */
  readonly maxOutputBytes: number;
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
  /** `OVERSEER_BOARD_SESSION_TTL_MS`: lifetime of a Bull Board session (`/admin/queues`). Default `900000`. */
  readonly boardSessionTtlMs: number;
  /** `OVERSEER_URL`: gateway URL the CLI talks to, no trailing slash. Default `http://<gateway host>:<gateway port>` (`http://127.0.0.1:7070`). */
  readonly overseerUrl: string;
  /** `OVERSEER_TOKEN`: bearer token the CLI sends. Default none. Secret: never printed. */
  readonly token: string | undefined;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export { SANDBOX_DRIVER_NAMES, type SandboxDriverName };

/** One row of the configuration reference (README table). */
export interface SettingReference {
  readonly name: string;
  /** Default as shown to users; dynamic defaults are described in words. */
  readonly default: string;
  readonly description: string;
}

interface SettingSpec<T> {
  readonly name: string;
  /** Raw value used when the variable is unset; it goes through the same schema. */
  readonly fallback: string | (() => string) | undefined;
  readonly defaultLabel: string;
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

function integer(min: number, max: number): z.ZodType<number, string> {
  const expected = `an integer from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d+$/, { error: expected })
    .transform(Number)
    .pipe(z.int({ error: expected }).min(min, { error: expected }).max(max, { error: expected }));
}

/** A comma-separated setting as its trimmed, non-empty items ("" is the empty list). */
const commaList = z.string().transform((v) =>
  v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
);

const CIDR_EXPECTED = "a comma-separated list of CIDRs such as 10.0.0.0/8, 127.0.0.1/32 or fd00::/8";

const BOOLEAN_EXPECTED = "one of 1, 0, true, false, yes, no";
const booleanSetting: z.ZodType<boolean, string> = z.stringbool({
  truthy: ["1", "true", "yes"],
  falsy: ["0", "false", "no"],
  case: "insensitive",
  error: BOOLEAN_EXPECTED,
});

function url(protocols: readonly string[], expected: string): z.ZodType<string, string> {
  return z
    .string()
    .refine((v) => URL.canParse(v) && protocols.includes(new URL(v).protocol), { error: expected });
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T): z.ZodType<T[number], string> {
  return z.enum(values, { error: `one of ${values.join(", ")}` });
}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const ORIGIN_EXPECTED = "a comma-separated list of origins such as https://app.example.com, or *";

function isOrigin(value: string): boolean {
  if (value === "*") return true;
  if (!URL.canParse(value)) return false;
  const u = new URL(value);
  return (u.protocol === "http:" || u.protocol === "https:") && u.origin === value.replace(/\/$/, "");
}

const MS_MAX = 3_600_000;
/** Smallest JSON text of one imported task (`{"id":"S01-00001","title":"t"},`), for the import/body check. */
const MIN_TASK_BYTES = 32;
const BYTES_MAX = 1_073_741_824;

function defaultWorkerId(): string {
  const host =
    os
      .hostname()
      .replace(/[^A-Za-z0-9._-]/g, "-")
      .replace(/^[^A-Za-z0-9]+/, "") || "worker";
  return `${host.slice(0, 100)}-${process.pid}`;
}

const SPECS: SpecTable = {
  databaseUrl: {
    name: "DATABASE_URL",
    fallback: "postgres://postgres@127.0.0.1:5432/overseer",
    defaultLabel: "postgres://postgres@127.0.0.1:5432/overseer",
    description: "Postgres connection URL; Postgres is the source of truth.",
    schema: url(["postgres:", "postgresql:"], "a postgres:// or postgresql:// URL"),
  },
  redisUrl: {
    name: "REDIS_URL",
    fallback: "redis://127.0.0.1:6379",
    defaultLabel: "redis://127.0.0.1:6379",
    description: "Redis connection URL (queues and live events only).",
    schema: url(["redis:", "rediss:"], "a redis:// or rediss:// URL"),
  },
  dataDir: {
    name: "OVERSEER_DATA_DIR",
    fallback: "./.overseer-data",
    defaultLabel: "./.overseer-data (made absolute against the working directory)",
    description: "Directory for worker repository mirrors, checkouts and run logs.",
    schema: z
      .string()
      .refine((v) => !v.includes("\0"), { error: "a directory path" })
      .transform((v) => path.resolve(v)),
  },
  queuePrefix: {
    name: "OVERSEER_QUEUE_PREFIX",
    fallback: QUEUE_DEFAULTS.prefix,
    defaultLabel: QUEUE_DEFAULTS.prefix,
    description: "Prefix of every Redis key, so several clusters can share one Redis.",
    schema: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, {
      error: "letters, digits, _ or - (at most 64, no colon)",
    }),
  },
  logLevel: {
    name: "LOG_LEVEL",
    fallback: "info",
    defaultLabel: "info",
    description: `Log level: ${LOG_LEVELS.join(", ")}.`,
    schema: oneOf(LOG_LEVELS),
  },
  workerConcurrency: {
    name: "OVERSEER_WORKER_CONCURRENCY",
    fallback: "2",
    defaultLabel: "2",
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
  sandbox: {
    name: "OVERSEER_SANDBOX",
    fallback: "bwrap",
    defaultLabel: "bwrap",
    description:
      "Sandbox driver of the worker's runs: bwrap, or none (needs OVERSEER_SANDBOX_UNSAFE_NONE). A project's sandbox.driver must match it (none: the worker must allow it).",
    schema: oneOf(SANDBOX_DRIVER_NAMES),
  },
  sandboxUnsafeNone: {
    name: "OVERSEER_SANDBOX_UNSAFE_NONE",
    fallback: "false",
    defaultLabel: "false",
    description: "Allow the none driver: agents then run with the worker's own rights.",
    schema: booleanSetting,
  },
  leaseTtlMs: {
    name: "OVERSEER_LEASE_TTL_MS",
    fallback: "15000",
    defaultLabel: "15000",
    description: "Lifetime of a coordinator's lease on a project; a crashed owner is replaced after it.",
    schema: integer(1000, MS_MAX),
  },
  reconcileIntervalMs: {
    name: "OVERSEER_RECONCILE_INTERVAL_MS",
    fallback: "5000",
    defaultLabel: "5000",
    description: "How often the coordinator re-reads Postgres and re-enqueues missing jobs.",
    schema: integer(100, MS_MAX),
  },
  heartbeatIntervalMs: {
    name: "OVERSEER_HEARTBEAT_INTERVAL_MS",
    fallback: "5000",
    defaultLabel: "5000",
    description: "How often leases and worker heartbeats are renewed; must be below the lease TTL.",
    schema: integer(100, MS_MAX),
  },
  jobAttempts: {
    name: "OVERSEER_JOB_ATTEMPTS",
    fallback: "3",
    defaultLabel: "3",
    description: "Attempts of a failing run before a remediation is created (projects may override).",
    schema: integer(1, 100),
  },
  retryBackoffMs: {
    name: "OVERSEER_RETRY_BACKOFF_MS",
    fallback: "1000",
    defaultLabel: "1000",
    description: "Base delay before a failed run is retried (exponential).",
    schema: integer(0, MS_MAX),
  },
  workerLockMs: {
    name: "OVERSEER_WORKER_LOCK_MS",
    fallback: "6000",
    defaultLabel: "6000",
    description:
      "Lock a worker holds on a running job, renewed while it runs; a dead or frozen worker's job is redelivered to another worker once it lapses (a worker that stalls longer than this loses its run, which is then redone).",
    schema: integer(1000, MS_MAX),
  },
  workerLockRenewMs: {
    name: "OVERSEER_WORKER_LOCK_RENEW_MS",
    fallback: "1500",
    defaultLabel: "1500",
    description:
      "How often a worker renews the locks of its running jobs; must be below OVERSEER_WORKER_LOCK_MS (the gap is how long a live worker may stall without losing its runs).",
    schema: integer(100, MS_MAX),
  },
  stalledIntervalMs: {
    name: "OVERSEER_STALLED_INTERVAL_MS",
    fallback: "1000",
    defaultLabel: "1000",
    description:
      "How often workers look for jobs whose lock lapsed (dead or frozen worker) and redeliver them; one check per interval runs across the fleet.",
    schema: integer(500, MS_MAX),
  },
  maxStalledCount: {
    name: "OVERSEER_MAX_STALLED_COUNT",
    fallback: "3",
    defaultLabel: "3",
    description: "Redeliveries of a job after worker deaths before it is recorded as a failed run.",
    schema: integer(1, 100),
  },
  resultConcurrency: {
    name: "OVERSEER_RESULT_CONCURRENCY",
    fallback: "8",
    defaultLabel: "8",
    description: "Run results a coordinator applies in parallel (different projects).",
    schema: integer(1, 256),
  },
  resultAttempts: {
    name: "OVERSEER_RESULT_ATTEMPTS",
    fallback: "5",
    defaultLabel: "5",
    description:
      "Failed applications of one run result (a result Postgres keeps refusing) before its run is ended as failed with a result_unapplicable incident, so the project carries on.",
    schema: integer(1, 1000),
  },
  mirrorFreshMs: {
    name: "OVERSEER_MIRROR_FRESH_MS",
    fallback: "5000",
    defaultLabel: "5000",
    description:
      "A worker skips the fetch before a new task's checkout when its mirror was fetched or pushed this recently (0 always fetches).",
    schema: integer(0, MS_MAX),
  },
  killGraceMs: {
    name: "OVERSEER_KILL_GRACE_MS",
    fallback: String(PROCESS_DEFAULTS.killGraceMs),
    defaultLabel: String(PROCESS_DEFAULTS.killGraceMs),
    description: "Delay between SIGTERM and SIGKILL when a run's process group is stopped.",
    schema: integer(0, 600_000),
  },
  workerDrainMs: {
    name: "OVERSEER_WORKER_DRAIN_MS",
    fallback: "30000",
    defaultLabel: "30000 (30 s)",
    description:
      "On SIGTERM a worker takes no new job and lets its running runs finish for this long; then it aborts the rest and hands their jobs straight back to the queue (a second signal cuts the wait short).",
    schema: integer(0, 86_400_000),
  },
  fenceWaitMs: {
    name: "OVERSEER_FENCE_WAIT_MS",
    fallback: "120000",
    defaultLabel: "120000 (2 min)",
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
    fallback: "300000",
    defaultLabel: "300000 (5 min)",
    description:
      "A CONNECT tunnel or forwarded plain-HTTP request of a run's egress proxy that carries no byte either way for this long is closed on both sides, so a streamed model response may pause for anything shorter (a hung gateway ends here). Connecting has its own 10 s limit; the run's idle_timeout_seconds and timeout_seconds still apply.",
    schema: integer(1000, MS_MAX),
  },
  runDiskMb: {
    name: "OVERSEER_RUN_DISK_MB",
    fallback: "2048",
    defaultLabel: "2048",
    description:
      "Disk (MiB, apparent size: a sparse file counts in full) a run may add to its checkout and control dir; beyond it the run is stopped and recorded as a disk_limit incident, and no single file may grow past it. A project's sandbox.disk_mb can only lower it.",
    schema: integer(1, 1_048_576),
  },
  diskCheckMs: {
    name: "OVERSEER_DISK_CHECK_MS",
    fallback: "250",
    defaultLabel: "250",
    description:
      "Pause between two measurements of a running run's disk use (a huge checkout is measured less often).",
    schema: integer(10, 60_000),
  },
  runMaxFiles: {
    name: "OVERSEER_RUN_MAX_FILES",
    fallback: "100000",
    defaultLabel: "100000",
    description:
      "Files and directories (empty ones too) a run may add to its checkout and control dir; beyond it the run is stopped and recorded as a disk_limit incident (each one costs the host-side git add, commit and every later checkout).",
    schema: integer(1, 100_000_000),
  },
  gitTimeoutMs: {
    name: "OVERSEER_GIT_TIMEOUT_MS",
    fallback: "120000",
    defaultLabel: "120000",
    description:
      "Bound of each host-side git step of a run (add, commit, checkout, merge; not fetch or push, which talk to the remote); a step past it is stopped and the run recorded as a disk_limit incident.",
    schema: integer(1000, MS_MAX),
  },
  maxOutputBytes: {
    name: "OVERSEER_MAX_OUTPUT_BYTES",
    fallback: "1048576",
    defaultLabel: "1048576",
    description:
      "Run output kept per run, in Postgres and in the live log stream in Redis; beyond it the oldest output is dropped with a marker.",
    schema: integer(1024, BYTES_MAX),
  },
  liveLogEntries: {
    name: "OVERSEER_LIVE_LOG_ENTRIES",
    fallback: "256",
    defaultLabel: "256",
    description:
      "Entries of one run's live log stream in Redis (trimmed exactly); each entry holds at most OVERSEER_MAX_OUTPUT_BYTES / this many bytes.",
    schema: integer(1, 65_536),
  },
  gatewayHost: {
    name: "OVERSEER_GATEWAY_HOST",
    fallback: "127.0.0.1",
    defaultLabel: "127.0.0.1",
    description: "Address the HTTP gateway listens on (0.0.0.0 to expose it).",
    schema: z.string().regex(/^[A-Za-z0-9.:[\]-]{1,253}$/, { error: "a host name or IP address" }),
  },
  gatewayPort: {
    name: "OVERSEER_GATEWAY_PORT",
    fallback: "7070",
    defaultLabel: "7070",
    description: "Port of the HTTP gateway (0 picks a free port).",
    schema: integer(0, 65535),
  },
  corsOrigins: {
    name: "OVERSEER_CORS_ORIGINS",
    fallback: "",
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
    fallback: "120",
    defaultLabel: "120",
    description: "Write requests (POST/PUT/PATCH/DELETE) allowed per token per minute.",
    schema: integer(1, 1_000_000),
  },
  maxBodyBytes: {
    name: "OVERSEER_MAX_BODY_BYTES",
    fallback: "1048576",
    defaultLabel: "1048576",
    description: "Largest HTTP request body the gateway accepts.",
    schema: integer(1024, BYTES_MAX),
  },
  maxBodyDepth: {
    name: "OVERSEER_MAX_BODY_DEPTH",
    fallback: "64",
    defaultLabel: "64",
    description:
      "Deepest nesting of arrays and objects the gateway accepts in a request body; deeper bodies get 400 before they are parsed.",
    schema: integer(2, 10_000),
  },
  maxImportTasks: {
    name: "OVERSEER_MAX_IMPORT_TASKS",
    fallback: String(DEFAULT_MAX_IMPORT_TASKS),
    defaultLabel: String(DEFAULT_MAX_IMPORT_TASKS),
    description: `Most tasks one task import request or one mission plan may hold (they are inserted in batches, all or nothing); more gets 422 asking to split the file, and a larger plan is refused back to its planner. Read by the gateway and the coordinator. An import of this many tasks must fit in OVERSEER_MAX_BODY_BYTES at ${MIN_TASK_BYTES} bytes a task (the default 10000 leaves about 100 bytes a task in 1 MiB).`,
    schema: integer(1, 1_000_000),
  },
  maxTitleChars: {
    name: "OVERSEER_MAX_TITLE_CHARS",
    fallback: String(DEFAULT_MAX_TITLE_CHARS),
    defaultLabel: String(DEFAULT_MAX_TITLE_CHARS),
    description:
      "Longest task title the gateway accepts in an import or a new task (422 beyond it; details go in the body). Task files and planner plans use the same validator with this default.",
    schema: integer(1, 100_000),
  },
  maxOpenStreams: {
    name: "OVERSEER_MAX_OPEN_STREAMS",
    fallback: "1000",
    defaultLabel: "1000",
    description:
      "SSE streams (events, run logs) one gateway keeps open, all clients together; beyond it a new stream gets 503 with Retry-After. The per-token and per-address caps come first.",
    schema: integer(1, 1_000_000),
  },
  maxStreamsPerToken: {
    name: "OVERSEER_MAX_STREAMS_PER_TOKEN",
    fallback: "50",
    defaultLabel: "50",
    description:
      "SSE streams one token may keep open at once; beyond it that token's new streams get 429 with Retry-After, so one token cannot take every stream slot.",
    schema: integer(1, 1_000_000),
  },
  maxStreamsPerAddress: {
    name: "OVERSEER_MAX_STREAMS_PER_ADDRESS",
    fallback: "100",
    defaultLabel: "100",
    description:
      "SSE streams read and operate tokens may keep open from one client address (the connection's address: behind a reverse proxy, the proxy's); beyond it 429 with Retry-After. Admin tokens are held only by their token cap, so an admin still gets a stream.",
    schema: integer(1, 1_000_000),
  },
  boardSessionTtlMs: {
    name: "OVERSEER_BOARD_SESSION_TTL_MS",
    fallback: "900000",
    defaultLabel: "900000 (15 min)",
    description:
      "Lifetime of a Bull Board session at /admin/queues, opened by an admin token from the web app; the session then ends and the board answers 401.",
    schema: integer(1000, 86_400_000),
  },
  overseerUrl: {
    name: "OVERSEER_URL",
    fallback: undefined,
    defaultLabel: "http://<OVERSEER_GATEWAY_HOST>:<OVERSEER_GATEWAY_PORT> (http://127.0.0.1:7070)",
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

/**
 * The configuration reference, in declaration order: the README table is generated from it
 * (`renderSettingsMarkdown`) and checked against it.
 */
export const SETTINGS_REFERENCE: readonly SettingReference[] = Object.freeze(
  Object.values(SPECS).map((s: SettingSpec<unknown>) =>
    Object.freeze({ name: s.name, default: s.defaultLabel, description: s.description }),
  ),
);

/**
 * Reads and validates every setting from `env`. Throws `ConfigError` (source `environment`)
 * listing every invalid variable at once.
 */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): ServiceSettings {
  const values: Record<string, unknown> = {};
  const issues: ConfigIssue[] = [];
  for (const [key, spec] of Object.entries(SPECS) as [keyof ServiceSettings, SettingSpec<unknown>][]) {
    const raw = normalizeRaw(env[spec.name]);
    const input = raw ?? (typeof spec.fallback === "function" ? spec.fallback() : spec.fallback);
    if (input === undefined) {
      values[key] = undefined;
      continue;
    }
    const result = spec.schema.safeParse(input, { error: expectedErrorMap });
    if (result.success) values[key] = result.data;
    else
      issues.push({
        path: spec.name,
        expected: result.error.issues[0]?.message ?? "a valid value",
        received: describeSetting(spec, input),
      });
  }
  issues.push(...crossCheck(values, env));
  if (issues.length > 0)
    throw new ConfigError(
      "environment",
      issues,
      "Fix or unset these variables; the configuration reference lists every variable and its default.",
    );
  values.overseerUrl ??= defaultOverseerUrl(values.gatewayHost as string, values.gatewayPort as number);
  return Object.freeze(values) as unknown as ServiceSettings;
}

/** Relationships between variables, checked only when both sides parsed. */
function crossCheck(values: Record<string, unknown>, env: NodeJS.ProcessEnv): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const { sandbox, sandboxUnsafeNone } = values;
  issues.push(
    ...intervalBelow(
      values,
      "heartbeatIntervalMs",
      "leaseTtlMs",
      "so a live owner renews before its lease expires",
    ),
  );
  const { maxOutputBytes, liveLogEntries } = values;
  if (
    typeof maxOutputBytes === "number" &&
    typeof liveLogEntries === "number" &&
    maxOutputBytes / liveLogEntries < 16
  ) {
    issues.push({
      path: SPECS.liveLogEntries.name,
      expected: `at most ${Math.floor(maxOutputBytes / 16)} entries (16 bytes each within OVERSEER_MAX_OUTPUT_BYTES, ${maxOutputBytes})`,
      received: String(liveLogEntries),
    });
  }
  issues.push(
    ...intervalBelow(
      values,
      "workerLockRenewMs",
      "workerLockMs",
      "so a live worker renews its job locks before they lapse",
    ),
  );
  const { maxImportTasks, maxBodyBytes } = values;
  if (
    typeof maxImportTasks === "number" &&
    typeof maxBodyBytes === "number" &&
    maxImportTasks * MIN_TASK_BYTES > maxBodyBytes
  ) {
    issues.push({
      path: SPECS.maxImportTasks.name,
      expected: `at most ${Math.floor(maxBodyBytes / MIN_TASK_BYTES)} tasks (${MIN_TASK_BYTES} bytes each must fit in OVERSEER_MAX_BODY_BYTES, ${maxBodyBytes}), or a larger body limit`,
      received: String(maxImportTasks),
    });
  }
  if (sandbox === "none" && sandboxUnsafeNone === false) {
    issues.push({
      path: SPECS.sandbox.name,
      expected: "bwrap, or none together with OVERSEER_SANDBOX_UNSAFE_NONE=true",
      received: describeReceived(normalizeRaw(env[SPECS.sandbox.name])),
      hint: "the none driver runs agents without isolation",
    });
  }
  return issues;
}

/** A renewal interval (`shorter`) must stay below the lifetime it renews (`longer`). */
function intervalBelow(
  values: Record<string, unknown>,
  shorter: keyof ServiceSettings,
  longer: keyof ServiceSettings,
  why: string,
): ConfigIssue[] {
  const interval = values[shorter];
  const lifetime = values[longer];
  if (typeof interval !== "number" || typeof lifetime !== "number" || interval < lifetime) return [];
  return [
    {
      path: SPECS[shorter].name,
      expected: `an interval below ${SPECS[longer].name} (${lifetime}) ${why}`,
      received: String(interval),
    },
  ];
}

function normalizeRaw(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}

/** Received text for a setting: secrets hidden, URL passwords masked. */
function describeSetting(spec: SettingSpec<unknown>, raw: string): string {
  if (spec.secret) return `a value of ${raw.length} characters (secret, hidden)`;
  return describeReceived(raw.replace(/(\/\/[^/:@]*:)[^@/]*@/, "$1[REDACTED]@"));
}

function defaultOverseerUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" || host === "::" || host === "[::]" ? "127.0.0.1" : host;
  const bracketed = reachable.includes(":") && !reachable.startsWith("[") ? `[${reachable}]` : reachable;
  return `http://${bracketed}:${port}`;
}

/**
 * For service entry points: the settings, or — on a bad value — every problem on stderr and
 * exit code 2 (configuration error), before anything starts.
 */
export function loadSettingsOrExit(service: string, env: NodeJS.ProcessEnv = process.env): ServiceSettings {
  try {
    return loadSettings(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${service}: refusing to start: ${error.message}\n`);
    process.exit(2);
  }
}
