import { GATEWAY_DEFAULTS } from "./gateway-defaults.ts";
import { integer } from "./setting-value-schemas.ts";

/**
 * The gateway's stream caps and answer caches (README "Configuration reference"), each an entry
 * of the settings table (service-settings-schema.ts).
 */
export const GATEWAY_SPECS = {
  maxOpenStreams: {
    name: "OVERSEER_MAX_OPEN_STREAMS",
    fallback: String(GATEWAY_DEFAULTS.maxOpenStreams),
    description:
      "SSE streams (events, run logs) one gateway keeps open, all clients together; beyond it a new stream gets 503 with Retry-After. The per-token and per-address caps come first.",
    schema: integer(1, 1_000_000),
  },
  maxStreamsPerToken: {
    name: "OVERSEER_MAX_STREAMS_PER_TOKEN",
    fallback: String(GATEWAY_DEFAULTS.maxStreamsPerToken),
    description:
      "SSE streams one token may keep open at once; beyond it that token's new streams get 429 with Retry-After, so one token cannot take every stream slot.",
    schema: integer(1, 1_000_000),
  },
  maxStreamsPerAddress: {
    name: "OVERSEER_MAX_STREAMS_PER_ADDRESS",
    fallback: String(GATEWAY_DEFAULTS.maxStreamsPerAddress),
    description:
      "SSE streams read and operate tokens may keep open from one client address (the connection's address: behind a reverse proxy, the proxy's); beyond it 429 with Retry-After. Admin tokens are held only by their token cap, so an admin still gets a stream.",
    schema: integer(1, 1_000_000),
  },
  statusCacheTtlMs: {
    name: "OVERSEER_STATUS_CACHE_MS",
    fallback: String(GATEWAY_DEFAULTS.statusCacheTtlMs),
    description:
      "Longest reuse of one project's status answer by the gateway; each transition's NOTIFY drops it at once (and the gateway's own writes before they answer), so this bounds only what a lost notification can cost; the worker heartbeats behind its pool waiting are read once per it for all projects. 0 reads Postgres and Redis on every request.",
    schema: integer(0, 600_000),
  },
  fleetCacheMs: {
    name: "OVERSEER_FLEET_CACHE_MS",
    fallback: String(GATEWAY_DEFAULTS.fleetCacheMs),
    description:
      "How long one fleet overview answer (GET /api/v1/fleet) is shared by all its pollers; other processes' changes show within it, this gateway's own writes at once. Each refresh re-reads only the projects whose NOTIFY arrived since the previous one (every project when the gateway cannot LISTEN). 0 refreshes on every request.",
    schema: integer(0, 600_000),
  },
  fleetStaleMs: {
    name: "OVERSEER_FLEET_STALE_MS",
    fallback: String(GATEWAY_DEFAULTS.fleetStaleMs),
    description:
      "How much older than OVERSEER_FLEET_CACHE_MS a fleet answer may still be given at once while one refresh runs behind it (stale-while-revalidate), so no poller waits for a refresh: an answer is at most the sum of both old, plus one read. 0: requests past the cache time wait for the refresh.",
    schema: integer(0, 600_000),
  },
  compressMinBytes: {
    name: "OVERSEER_COMPRESS_MIN_BYTES",
    fallback: String(GATEWAY_DEFAULTS.compressMinBytes),
    description:
      "Smallest fleet or status answer the gateway compresses (brotli or gzip, as the request's Accept-Encoding allows; once per change of the answer, not per request). Smaller answers, and requests without Accept-Encoding, get the bytes as they are.",
    schema: integer(0, 1_073_741_824),
  },
  accessLogSample: {
    name: "OVERSEER_ACCESS_LOG_SAMPLE",
    fallback: String(GATEWAY_DEFAULTS.accessLogSample),
    description:
      "One in this many successful fast reads (GET or HEAD answered below 400 within OVERSEER_ACCESS_LOG_SLOW_MS, such as dashboard polls) gets an access log line, which carries `sampled` = this number; every error, write and slow request gets its line. The latency metrics count every request. 1 logs every request.",
    schema: integer(1, 1_000_000),
  },
  accessLogSlowMs: {
    name: "OVERSEER_ACCESS_LOG_SLOW_MS",
    fallback: String(GATEWAY_DEFAULTS.accessLogSlowMs),
    description:
      "A read that took at least this long always gets its access log line, whatever OVERSEER_ACCESS_LOG_SAMPLE says.",
    schema: integer(0, 600_000),
  },
};
