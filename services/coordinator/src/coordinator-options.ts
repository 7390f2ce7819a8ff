import { hostname } from "node:os";
import { COORDINATOR_DEFAULTS } from "@overseer/settings";
import { TRANSITION_DEFAULTS } from "@overseer/transitions";

/** How a coordinator replica behaves. Every field has a default (`COORDINATOR_DEFAULTS`). */
export interface CoordinatorOptions {
  /** Unique id of this replica (lease owner). Default `coordinator-<host>-<pid>`. */
  id?: string;
  /** Lease time-to-live, at least 1000 ms; renewed every third of it. Default 15000 ms. */
  leaseTtlMs?: number;
  /** Safety-net reconcile period. Default 5000 ms. */
  reconcileIntervalMs?: number;
  /** Active runs one reconcile round checks against Redis. Default 500. */
  reconcileBatch?: number;
  /** Results applied in parallel (different projects). Default 8. */
  resultConcurrency?: number;
  /** BullMQ key prefix. Default `overseer`. */
  prefix?: string;
  /** Most projects this replica leases; default null: unlimited. */
  maxProjects?: number | null;
  /** Attempts to apply a transition that hit a concurrent change. Default 8 (`TRANSITION_DEFAULTS`). */
  conflictRetries?: number;
  /**
   * Failed applications of one run result (any error) before the run is ended as failed with
   * a `result_unapplicable` incident. Default 5.
   */
  resultAttempts?: number;
  /** A result read but not applied (failed, or its replica died) is taken again after this long. Default 2000 ms. */
  resultRetryMs?: number;
  /** Most tasks a planner's plan may hold (OVERSEER_MAX_IMPORT_TASKS, the import bound). Default 10000. */
  maxPlanTasks?: number;
  /** Forge jobs (pull request work of pull_request projects) run in parallel (`OVERSEER_FORGE_CONCURRENCY`). Default 4. */
  forgeConcurrency?: number;
  /** Backoff unit of forge requests after a 5xx (retries wait n² × this on GitHub; `OVERSEER_FORGE_RETRY_BASE_MS`). Default 1000 ms. */
  forgeRetryBaseMs?: number;
  /**
   * Least ms between two GitHub writes of one token, the forge's and the trackers' (writes that
   * notify people: 3 ×; `OVERSEER_GITHUB_WRITE_INTERVAL_MS`). Default 1000, GitHub's guidance; 0: none.
   */
  githubWriteIntervalMs?: number;
  /** The dashboard's base URL (`OVERSEER_DASHBOARD_URL`): run links in pull request bodies. Default null: run ids only. */
  dashboardUrl?: string | null;
  /** Notification deliveries sent in parallel. Default 8. */
  notifyConcurrency?: number;
  /** Attempts of one delivery before it is a dead letter (as the queue's `notifyAttempts`). Default 12. */
  notifyAttempts?: number;
  /** Bound on one webhook or Slack request. Default 10000 ms. */
  notifyTimeoutMs?: number;
  /** Period of each intake source's tracker poll. Default 60000 ms. */
  intakePollMs?: number;
  /** Intake jobs run in parallel. Default 2. */
  intakeConcurrency?: number;
  /** Bot token Slack subscriptions' messages are posted with. Default "": Slack deliveries fail. */
  slackBotToken?: string;
  /** Slack's Web API base. Default `https://slack.com/api/`. */
  slackApiUrl?: string;
}

/** Every option after defaults: what `Coordinator` accepts. */
export type ResolvedCoordinatorOptions = Readonly<Required<CoordinatorOptions>>;

/**
 * Merges options over `COORDINATOR_DEFAULTS` once and checks them right after; an error names the
 * key, the rule and the value received.
 */
export function resolveCoordinatorOptions(options: CoordinatorOptions = {}): ResolvedCoordinatorOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const resolved: ResolvedCoordinatorOptions = Object.freeze({
    ...COORDINATOR_DEFAULTS,
    id: `coordinator-${hostname()}-${process.pid}`,
    conflictRetries: TRANSITION_DEFAULTS.conflictRetries,
    ...(defined as CoordinatorOptions),
  });
  const atLeast: [keyof ResolvedCoordinatorOptions, number][] = [
    ["leaseTtlMs", 1000],
    ["reconcileIntervalMs", 1],
    ["reconcileBatch", 1],
    ["resultConcurrency", 1],
    ["conflictRetries", 1],
    ["resultAttempts", 1],
    ["resultRetryMs", 1],
    ["maxPlanTasks", 1],
    ["forgeConcurrency", 1],
    ["forgeRetryBaseMs", 0],
    ["githubWriteIntervalMs", 0],
    ["notifyConcurrency", 1],
    ["notifyAttempts", 1],
    ["notifyTimeoutMs", 1],
    ["intakePollMs", 1000],
    ["intakeConcurrency", 1],
  ];
  if (resolved.maxProjects !== null) atLeast.push(["maxProjects", 1]);
  for (const [key, min] of atLeast) {
    const value = resolved[key];
    if (typeof value !== "number" || !Number.isInteger(value) || value < min)
      throw new RangeError(`${key} must be an integer of at least ${min}, received ${String(value)}`);
  }
  if (resolved.id.trim() === "")
    throw new RangeError(`id must be a non-empty name, received ${JSON.stringify(resolved.id)}`);
  return resolved;
}
