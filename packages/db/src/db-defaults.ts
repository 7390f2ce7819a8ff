/** Every default limit of the Postgres layer, defined once (each option's doc names its default). */
export const DB_DEFAULTS = Object.freeze({
  /** `application_name` of every connection (visible in pg_stat_activity). */
  applicationName: "overseer",
  /** Connections in the pool. */
  poolMax: 10,
  /** Reconnection backoff of the LISTEN connection: first wait and ceiling. */
  listenerMinBackoffMs: 100,
  listenerMaxBackoffMs: 5000,
});
