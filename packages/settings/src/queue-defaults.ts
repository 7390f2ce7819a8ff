/**
 * Defaults of the queue package, defined once. They live here, below the queue package, because
 * the service settings schema needs them and config must not import the queue.
 */
export const QUEUE_DEFAULTS = Object.freeze({
  /** Prefix of every Redis key (`OVERSEER_QUEUE_PREFIX`). */
  prefix: "overseer",
});
