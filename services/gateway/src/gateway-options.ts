import path from "node:path";
import type { Db, DbHandle } from "@overseer/db";
import type { LiveChannel, Redis, RunQueues, WorkerRegistry } from "@overseer/queue";
import type { Logger } from "@overseer/runtime";
import { CLUSTER_DEFAULTS, GATEWAY_DEFAULTS } from "@overseer/settings";
import { defaultWebDir } from "./views/web-assets.ts";

/** What the gateway talks to. The caller owns these connections and closes them. */
export interface GatewayDeps {
  readonly db: Db;
  /** Commands (heartbeats, log stream reads). Subscribers and blocking readers are duplicated from it. */
  readonly redis: Redis;
  readonly queues: RunQueues;
  readonly live: LiveChannel;
  readonly registry: WorkerRegistry;
  readonly logger: Logger;
  /**
   * Optional notification listener of the same database, used only to LISTEN to the transition
   * channel (`POSTGRES_NOTIFY_CHANNEL` of `@overseer/db`) so cached status answers drop at once on changes that append
   * no event (task imports by other processes). Without it such changes show within
   * `statusCacheTtlMs`.
   */
  readonly notifications?: DbHandle["notifications"];
}

/** Limits and behaviour of the HTTP surface. Every field has a default (`GATEWAY_DEFAULTS`). */
export interface GatewayOptions {
  /** Address to listen on. Default `127.0.0.1` (loopback only; set `0.0.0.0` deliberately to expose it). */
  host?: string;
  /** Port; 0 picks a free one. Default 7070. */
  port?: number;
  /** After shutdown began, connections still open after this many ms are destroyed. Default 5000. */
  shutdownGraceMs?: number;
  /** Origins allowed cross-origin access; `["*"]` for any. Default `[]`: no CORS headers at all (closed). */
  corsOrigins?: readonly string[];
  /** Write requests (POST/PUT/PATCH/DELETE) per token per fixed one-minute window. Default 120. */
  rateLimitWritesPerMinute?: number;
  /** Largest request body in bytes; larger bodies get 413. Default 1048576 (1 MiB). */
  maxBodyBytes?: number;
  /** Deepest nesting of arrays and objects in a request body; deeper bodies get 400 before parsing. Default 64. */
  maxBodyDepth?: number;
  /** Most tasks one `tasks/import` request may hold; more gets 422. Default 10000 (fits the default body limit). */
  maxImportTasks?: number;
  /** Longest task title in an import or a new task, in characters; longer gets 422. Default 500. */
  maxTitleChars?: number;
  /**
   * How long a verified token is trusted without asking Postgres again, in ms. Revoking a
   * token through this gateway evicts it at once; a revocation made elsewhere (CLI, another
   * replica) takes effect within this delay. 0 disables the cache. Default 5000.
   */
  tokenCacheTtlMs?: number;
  /** Most verified tokens kept in the cache. Default 10000. */
  tokenCacheMaxEntries?: number;
  /** Interval between SSE keep-alive comments, and of the Postgres safety poll of event streams, in ms. Default 15000. */
  keepAliveMs?: number;
  /** How long one blocking read of a run log stream waits (XREAD BLOCK), in ms. Default 2000. */
  logBlockMs?: number;
  /** Open SSE streams at once, all clients together; beyond it new streams get 503. Default 1000. */
  maxOpenStreams?: number;
  /** Open SSE streams of one token; beyond it that token's new streams get 429. Default 50. */
  maxStreamsPerToken?: number;
  /**
   * Open SSE streams of non-admin tokens from one client address (the socket's remote address:
   * a reverse proxy counts as one); beyond it new streams get 429. Default 100.
   */
  maxStreamsPerAddress?: number;
  /** Heartbeats older than this are not listed as live workers, in ms. Default 30000. */
  workerStaleAfterMs?: number;
  /** Attempts of an operator transition that meets a concurrent change, before answering 409. Default 5. */
  conflictRetries?: number;
  /** Time limit of each readiness check (Postgres, Redis), in ms. Default 2000. */
  readyTimeoutMs?: number;
  /**
   * Longest reuse of one project's status answer, in ms. An answer is reused only while the
   * project's change token (row version + last event id) is unchanged, so transitions show
   * at once; this bound only matters for changes without events (see `GatewayDeps.notifications`).
   * The worker heartbeats (the answer's pool waiting) are read once per it for every project
   * (live/served-pools.ts). 0 disables the cache. Default 2000.
   */
  statusCacheTtlMs?: number;
  /**
   * How long one fleet overview answer (`GET /api/v1/fleet`) is shared by every request, in ms:
   * other processes' changes show within it, this gateway's own at once. A refresh re-reads the
   * projects that changed since the previous one (live/fleet-answer.ts). 0 refreshes on every
   * request. Default 1000.
   */
  fleetCacheMs?: number;
  /**
   * How much older than `fleetCacheMs` a fleet answer may still be given at once while one
   * refresh runs behind it (stale-while-revalidate), in ms, so no poller waits for a refresh:
   * an answer is at most `fleetCacheMs + fleetStaleMs` old (plus one read).
   * This gateway's own writes still show at once. 0: requests past `fleetCacheMs` wait for the
   * refresh. Default 2000.
   */
  fleetStaleMs?: number;
  /**
   * Smallest fleet or status answer compressed (brotli or gzip per the request's
   * Accept-Encoding, once per change of the answer: http/encoded-body.ts), in bytes. Default 1024.
   */
  compressMinBytes?: number;
  /**
   * One in this many successful fast reads (GET/HEAD below 400 within `accessLogSlowMs`) gets an
   * access log line (with `sampled`); errors, writes and slow requests always do. 1: every
   * request. Default 10.
   */
  accessLogSample?: number;
  /** A read at least this slow always gets its access log line, in ms. Default 500. */
  accessLogSlowMs?: number;
  /** How long a computed `/metrics` snapshot of database and queue figures is reused, in ms. Default 5000. */
  metricsCacheMs?: number;
  /** On shutdown, how long to wait for running request handlers before giving up waiting, in ms. Default 5000. */
  shutdownDrainMs?: number;
  /** Add prom-client's process metrics (CPU, memory, event loop) to `/metrics`. Default true. */
  processMetrics?: boolean;
  /** Built web app served at `/` (`apps/web/dist`). Default: the `@overseer/web` workspace's dist. */
  webDir?: string;
  /**
   * Directory of the gateway's read-only repository mirrors (commit diffs for the web app),
   * `<dataDir>/mirrors/`. Default `<OVERSEER_DATA_DIR>/gateway` as passed by the entry point,
   * else `./.overseer-data/gateway`.
   */
  dataDir?: string;
  /**
   * Lifetime of a Bull Board session (`POST /api/v1/admin/queues/session`, cookie scoped to
   * `/admin/queues`), in ms. Default 900000 (15 min).
   */
  boardSessionTtlMs?: number;
  /**
   * Secret of forge webhooks (`POST /api/v1/forge/{id}/webhooks/{forge}`): the HMAC key of
   * GitHub's and Gitea's signatures, GitLab's `X-Gitlab-Token`. Default "": webhooks refused (503).
   */
  forgeWebhookSecret?: string;
  /**
   * Signing secret of the Slack app (`POST /api/v1/slack/interactions` checks each click's `v0`
   * signature with it). Default "": clicks refused (503).
   */
  slackSigningSecret?: string;
  /** Slack user id → id of the API token a click of that user acts as. Default none. */
  slackOperators?: Readonly<Record<string, string>>;
  /** Origin a click's `response_url` must have. Default `https://hooks.slack.com`. */
  slackResponseOrigin?: string;
}

export type ResolvedGatewayOptions = Readonly<
  Required<{
    [K in keyof GatewayOptions]: NonNullable<GatewayOptions[K]>;
  }>
>;

/** Where the gateway's files are unless told otherwise; every other default is `GATEWAY_DEFAULTS`. */
export const GATEWAY_LOCATION_DEFAULTS = Object.freeze({
  webDir: defaultWebDir(),
  dataDir: path.resolve(CLUSTER_DEFAULTS.dataDir, "gateway"),
});

/** Options that must be numbers greater than 0. */
const POSITIVE = [
  "shutdownGraceMs",
  "rateLimitWritesPerMinute",
  "maxBodyBytes",
  "maxBodyDepth",
  "maxImportTasks",
  "maxTitleChars",
  "tokenCacheMaxEntries",
  "keepAliveMs",
  "logBlockMs",
  "maxOpenStreams",
  "maxStreamsPerToken",
  "maxStreamsPerAddress",
  "workerStaleAfterMs",
  "conflictRetries",
  "readyTimeoutMs",
  "shutdownDrainMs",
  "boardSessionTtlMs",
  "accessLogSample",
] as const satisfies readonly (keyof ResolvedGatewayOptions)[];

/** Options that may be 0 (0 turns the cache off). */
const NON_NEGATIVE = [
  "tokenCacheTtlMs",
  "metricsCacheMs",
  "statusCacheTtlMs",
  "fleetCacheMs",
  "fleetStaleMs",
  "compressMinBytes",
  "accessLogSlowMs",
] as const;

/**
 * Merges options over `GATEWAY_DEFAULTS` (and `GATEWAY_LOCATION_DEFAULTS`) once, and checks them
 * right after with messages that name the key, the rule and the value received (BullMQ's pattern).
 */
export function resolveGatewayOptions(options: GatewayOptions = {}): ResolvedGatewayOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const resolved: ResolvedGatewayOptions = Object.freeze({
    ...GATEWAY_DEFAULTS,
    ...GATEWAY_LOCATION_DEFAULTS,
    ...(defined as GatewayOptions),
  });
  for (const key of POSITIVE) {
    const value = resolved[key];
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      throw new RangeError(`${key} must be a number greater than 0, received ${String(value)}`);
    }
  }
  for (const key of NON_NEGATIVE) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0) {
      throw new RangeError(`${key} must be a number >= 0, received ${String(resolved[key])}`);
    }
  }
  if (!Number.isInteger(resolved.port) || resolved.port < 0 || resolved.port > 65535) {
    throw new RangeError(`port must be an integer from 0 to 65535, received ${String(resolved.port)}`);
  }
  return resolved;
}
