/**
 * Defaults every process of a cluster shares (connections, data directory, sandbox driver),
 * defined once: the settings take their fallbacks from them, and services that need one when
 * no setting is passed (the gateway's data directory) read it here.
 */
export const CLUSTER_DEFAULTS = Object.freeze({
  /** Postgres, the source of truth (`DATABASE_URL`). */
  databaseUrl: "postgres://postgres@127.0.0.1:5432/overseer",
  /** Redis: queues and live events (`REDIS_URL`). */
  redisUrl: "redis://127.0.0.1:6379",
  /** Seed nodes of a Redis Cluster, `host:port` each (`REDIS_CLUSTER_NODES`); empty: not a cluster. */
  redisClusterNodes: Object.freeze([] as string[]),
  /** Sentinels watching the Redis primary, `host:port` each (`REDIS_SENTINELS`); empty: no Sentinel. */
  redisSentinels: Object.freeze([] as string[]),
  /** Name of the primary the Sentinels watch (`REDIS_SENTINEL_MASTER`). */
  redisSentinelMaster: "mymaster",
  /** Worker mirrors, checkouts, run logs; relative to the working directory (`OVERSEER_DATA_DIR`). */
  dataDir: "./.overseer-data",
  /** Sandbox driver of a worker's runs (`OVERSEER_SANDBOX`). */
  sandbox: "bwrap",
  /** Whether the `none` driver (no isolation) is allowed (`OVERSEER_SANDBOX_UNSAFE_NONE`). */
  sandboxUnsafeNone: false,
  /**
   * Whether a worker inside a container may run runs whose pids and memory limits it cannot
   * enforce per run (no delegated cgroup) (`OVERSEER_ALLOW_UNENFORCED_LIMITS`).
   */
  allowUnenforcedLimits: false,
});
