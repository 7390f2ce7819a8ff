import { COORDINATOR_DEFAULTS } from "./coordinator-defaults.ts";
import { integer } from "./setting-value-schemas.ts";

/** `OVERSEER_INTAKE_POLL_MS`: the period of each intake source's tracker poll (README "Intake and notifications"). */
export const INTAKE_POLL_MS_SPEC = {
  name: "OVERSEER_INTAKE_POLL_MS",
  fallback: String(COORDINATOR_DEFAULTS.intakePollMs),
  description:
    "Period of each intake source's poll of its tracker (issues updated since the last poll, and its live items); one poll per source, none for a project without sources. Webhooks bring changes sooner.",
  schema: integer(1000, 86_400_000),
};

/** `OVERSEER_INTAKE_CONCURRENCY`: intake jobs a coordinator runs at once. */
export const INTAKE_CONCURRENCY_SPEC = {
  name: "OVERSEER_INTAKE_CONCURRENCY",
  fallback: String(COORDINATOR_DEFAULTS.intakeConcurrency),
  description: "Intake jobs (source polls, issue re-reads) a coordinator runs at once.",
  schema: integer(1, 64),
};
