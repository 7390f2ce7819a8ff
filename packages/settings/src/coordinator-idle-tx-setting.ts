import { integer, MS_MAX } from "./setting-value-schemas.ts";

/**
 * `OVERSEER_COORDINATOR_IDLE_TX_MS`: the coordinator's Postgres sessions run with this
 * idle_in_transaction_session_timeout (unset: the lease TTL; the loader refuses more than it).
 * A coordinator cut off mid-claim, whose connection Postgres still sees open, holds its claim's
 * lock on the lease until Postgres ends the transaction; this bounds that hold, so the takeover
 * bound the README gives (lease TTL + heartbeat) holds.
 */
export const COORDINATOR_IDLE_TX_MS_SPEC = {
  name: "OVERSEER_COORDINATOR_IDLE_TX_MS",
  fallback: undefined,
  defaultLabel: "(unset: `OVERSEER_LEASE_TTL_MS`)",
  description:
    "Postgres ends a coordinator's session whose transaction waits this long for its next statement (idle_in_transaction_session_timeout), releasing its locks: a coordinator cut off mid-claim, whose connection Postgres still sees open, keeps its lease from the replica taking over no longer than this. At most the lease TTL, so the takeover bound holds.",
  schema: integer(100, MS_MAX),
};
