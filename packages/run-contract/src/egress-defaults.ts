/**
 * Defaults of a run's egress proxy, defined once: the sandbox's proxy merges its options over them
 * and the worker settings take `OVERSEER_EGRESS_IDLE_TIMEOUT_MS`'s fallback from them.
 */
export const EGRESS_DEFAULTS = Object.freeze({
  /** Destination ports allowed for host rules without a port. */
  allowPorts: Object.freeze([443, 80]) as readonly number[],
  /** Upper bound on establishing the upstream TCP connection, in ms. */
  connectTimeoutMs: 10_000,
  /** A tunnel or forwarded request quiet both ways for this long is closed, in ms. */
  idleTimeoutMs: 300_000,
  /** Simultaneous client connections a proxy accepts. */
  maxConnections: 256,
});
