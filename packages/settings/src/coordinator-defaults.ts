import { DEFAULT_MAX_IMPORT_TASKS } from "@overseer/task-files";
import { QUEUE_DEFAULTS } from "./queue-defaults.ts";

/**
 * Defaults of the coordinator, defined once. The service merges its options over them
 * (`resolveCoordinatorOptions`), and the settings take their fallbacks from them. They live in
 * config, below the service, because the settings schema needs them.
 */
export const COORDINATOR_DEFAULTS = Object.freeze({
  /** Lifetime of a project lease; renewed every third of it (`OVERSEER_LEASE_TTL_MS`). */
  leaseTtlMs: 15_000,
  /** Safety-net reconcile period (`OVERSEER_RECONCILE_INTERVAL_MS`). */
  reconcileIntervalMs: 5_000,
  /** Active runs one reconcile round checks against Redis (`OVERSEER_RECONCILE_BATCH`). */
  reconcileBatch: 500,
  /**
   * Bound of a service's shutdown after SIGTERM, in ms (`OVERSEER_SHUTDOWN_GRACE_MS`): the
   * coordinator releases its leases within it; a worker gets it after its drain.
   */
  shutdownGraceMs: 5_000,
  /** Run results applied in parallel, different projects (`OVERSEER_RESULT_CONCURRENCY`). */
  resultConcurrency: 8,
  /** Failed applications of one run result before its run is ended as failed (`OVERSEER_RESULT_ATTEMPTS`). */
  resultAttempts: 5,
  /**
   * A run result read but not acknowledged this long (its application failed, or its replica
   * died) is taken again from the results stream (`OVERSEER_RESULT_RETRY_MS`).
   */
  resultRetryMs: 2_000,
  /** Most tasks a planner's plan may hold: the import bound (`OVERSEER_MAX_IMPORT_TASKS`). */
  maxPlanTasks: DEFAULT_MAX_IMPORT_TASKS,
  /** BullMQ key prefix (`OVERSEER_QUEUE_PREFIX`). */
  prefix: QUEUE_DEFAULTS.prefix,
  /** Most projects one replica leases; null: no bound. */
  maxProjects: null as number | null,
  /** Forge jobs (pull request work) run in parallel by one replica (`OVERSEER_FORGE_CONCURRENCY`). */
  forgeConcurrency: 4,
  /** Backoff unit of forge requests after a 5xx, in ms (`OVERSEER_FORGE_RETRY_BASE_MS`). */
  forgeRetryBaseMs: 1000,
  /** Least ms between two GitHub writes of one token, GitHub's guidance; 0: none (`OVERSEER_GITHUB_WRITE_INTERVAL_MS`). */
  githubWriteIntervalMs: 1000,
  /** The dashboard's base URL for run links in pull request bodies; null: run ids only (`OVERSEER_DASHBOARD_URL`). */
  dashboardUrl: null as string | null,
  /** Attempts of one notification delivery before it is a dead letter (`OVERSEER_NOTIFY_ATTEMPTS`). */
  notifyAttempts: 12,
  /** First wait between a delivery's attempts, doubled each time (`OVERSEER_NOTIFY_BACKOFF_MS`). */
  notifyBackoffMs: 5_000,
  /** Bound on one webhook or Slack request (`OVERSEER_NOTIFY_TIMEOUT_MS`). */
  notifyTimeoutMs: 10_000,
  /** Deliveries one replica sends in parallel, different streams (`OVERSEER_NOTIFY_CONCURRENCY`). */
  notifyConcurrency: 8,
  /** Period of each intake source's poll of its tracker, in ms (`OVERSEER_INTAKE_POLL_MS`). */
  intakePollMs: 60_000,
  /** Intake jobs (polls, issue re-reads) one replica runs in parallel (`OVERSEER_INTAKE_CONCURRENCY`). */
  intakeConcurrency: 2,
  /** Bot token Slack notifications are posted with; "" fails Slack deliveries (`OVERSEER_SLACK_BOT_TOKEN`). */
  slackBotToken: "",
  /** Slack's Web API base (`OVERSEER_SLACK_API_URL`). */
  slackApiUrl: "https://slack.com/api/",
});
