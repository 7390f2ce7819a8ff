/** Every default limit of the Postgres layer, defined once (each option's doc names its default). */
export const DB_DEFAULTS = Object.freeze({
  /** `application_name` of every connection (visible in pg_stat_activity). */
  applicationName: "overseer",
  /** Connections in the pool. */
  poolMax: 10,
  /**
   * A pooled connection idle this long is closed. Long enough to outlive a lull between bursts
   * of transitions: a new connection costs Postgres a backend (fork, catalog caches) and the
   * preparation of every statement again (prepared-statements.ts: parsed, then planned five
   * times before its generic plan is reused); with node-postgres' 10 s, a coordinator reopened
   * a connection every few seconds under a steady load.
   */
  poolIdleTimeoutMs: 120_000,
  /** Reconnection backoff of the LISTEN connection: first wait and ceiling. */
  listenerMinBackoffMs: 100,
  listenerMaxBackoffMs: 5000,
  /**
   * TCP keepalive on every connection, first probe after this long idle: a peer that vanished
   * (host down, link cut, a NAT that forgot the flow) is noticed by the kernel instead of the
   * socket waiting forever on a connection nobody will answer.
   */
  keepAliveInitialDelayMs: 10_000,
});
