import type { LandingFailure, MissionState, Proposal, RepoKind } from "@overseer/domain";
import type { ColumnType, Generated, Insertable, Selectable } from "kysely";
import type {
  IntakeItemsTable,
  IntakeSourcesTable,
  IntakeWebhookDeliveriesTable,
  TrackerUpdatesTable,
} from "./intake-schema.ts";

/** Columns Postgres fills by default on insert. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** jsonb: read as parsed JSON, written as a JSON string through `json()`. */
type Json<T> = ColumnType<T, unknown, unknown>;
/** int8 comes back as a string from node-postgres. */
type BigIntColumn = ColumnType<string, number | string | bigint | undefined, number | string | bigint>;

export interface ProjectsTable {
  id: string;
  name: string;
  repo: string;
  branch: Defaulted<string>;
  /** What the repository was at registration (domain `RepoKind`); decides where work lands. */
  repo_kind: Defaulted<RepoKind>;
  objective: Defaulted<string>;
  runner_config: Json<Record<string, unknown>>;
  status: Defaulted<"active" | "paused" | "stopped" | "completed">;
  status_reason: ColumnType<string | null, string | null | undefined, string | null>;
  continuous: Defaulted<boolean>;
  concurrency: Defaulted<number>;
  sessions_limit: ColumnType<number | null, number | null | undefined, number | null>;
  sessions_used: Defaulted<number>;
  stage: ColumnType<string | null, string | null | undefined, string | null>;
  /** The project's mission (objective, round, limits, approved evidence); null = none. */
  mission: ColumnType<MissionState | null, unknown, unknown>;
  budget_usd: ColumnType<number | null, number | null | undefined, number | null>;
  cost_usd: Defaulted<number>;
  tokens_in: BigIntColumn;
  tokens_out: BigIntColumn;
  /** Input tokens served from the provider's cache (part of tokens_in). */
  tokens_cached: BigIntColumn;
  /** Tokens no price covered (neither the price table nor the CLI): shown as unpriced, never $0. */
  tokens_unpriced: BigIntColumn;
  version: Defaulted<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TasksTable {
  project_id: string;
  id: string;
  seq: Generated<string>;
  stage: string;
  title: string;
  body: Defaulted<string>;
  role: Defaulted<string>;
  scope: Defaulted<string[]>;
  acceptance: Defaulted<string[]>;
  priority: Defaulted<number>;
  kind: Defaulted<"work" | "resolver" | "plan">;
  parent_id: string | null;
  root_id: string | null;
  depth: Defaulted<number>;
  status: Defaulted<string>;
  status_reason: string | null;
  awaiting_reason: string | null;
  blocked_by: string | null;
  return_to: string | null;
  retired_agent_ids: Defaulted<string[]>;
  feedback: string | null;
  answers: Json<unknown[]>;
  executor_agent_id: string | null;
  branch_head: string | null;
  /** Planning tasks: the last proposal (task graph or completion evidence). */
  proposal: ColumnType<Proposal | null, unknown, unknown>;
  /** The last approved landing that failed (conflict or check), until the next submit. */
  landing: ColumnType<LandingFailure | null, unknown, unknown>;
  /** Failed landings in a row (domain `Task.landingFailures`). */
  landing_failures: Defaulted<number>;
  failures: Defaulted<number>;
  not_before: NullableTimestamp;
  version: Defaulted<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TaskDependenciesTable {
  project_id: string;
  task_id: string;
  depends_on: string;
}

export interface RunsTable {
  id: string;
  project_id: string;
  task_id: string;
  agent_id: string;
  action: string;
  attempt: Defaulted<number>;
  status: string;
  transition: string | null;
  failure: string | null;
  not_before: NullableTimestamp;
  worker_id: string | null;
  prompt: string | null;
  prompt_chars: number | null;
  exit_code: number | null;
  signal: string | null;
  timed_out: Defaulted<boolean>;
  duration_ms: number | null;
  scope_violations: Defaulted<string[]>;
  output: string | null;
  output_truncated: Defaulted<boolean>;
  commit_sha: string | null;
  tokens_in: BigIntColumn;
  tokens_out: BigIntColumn;
  /** Input tokens served from the provider's cache (part of tokens_in). */
  tokens_cached: BigIntColumn;
  /** Tokens no price covered (neither the price table nor the CLI): shown as unpriced, never $0. */
  tokens_unpriced: BigIntColumn;
  cost_usd: Defaulted<number>;
  /** Where the usage was read (`overseer-agent`, the CLI's stream or session file); null = none recorded. */
  usage_source: ColumnType<string | null, string | null | undefined, string | null>;
  /** Epoch-ms milestones of the run (enqueued, picked, spawned, exited, reported, committed). */
  timing: Json<Record<string, number | null | Record<string, number>>>;
  /**
   * The run's phase timeline, back to back from its creation to its result's application
   * (run-contract run-phases.ts); empty when no worker result was applied.
   */
  phases: ColumnType<RunPhaseRow[], unknown, unknown>;
  /** The digest of the run image the run ran on (`sandbox.image`); null: the worker's own system. */
  image_digest: ColumnType<string | null, string | null | undefined, string | null>;
  /** The sandbox driver the run ran under (`bwrap`, `gvisor`, `none`); null: none chosen or reported. */
  sandbox_driver: ColumnType<string | null, string | null | undefined, string | null>;
  /** The worker pool the run needs (runner config `pool`), set when its job is queued; `default` until then. */
  pool: Generated<string>;
  /**
   * The run environment the run used (run-contract `RunEnvironment`: environment file, image and
   * its source, setup commands, agent CLI); null: none reported.
   */
  environment: ColumnType<Record<string, unknown> | null, unknown, unknown>;
  /** A landing that went through: the commit it put on `landed_branch` (run fence, migration 0027). */
  landed_sha: ColumnType<string | null, string | null | undefined, string | null>;
  landed_branch: ColumnType<string | null, string | null | undefined, string | null>;
  /** The landing's place among the project's landings (largest: the newest); null: no landing. */
  landing_seq: ColumnType<string | null, string | number | null | undefined, string | number | null>;
  created_at: Timestamp;
  started_at: NullableTimestamp;
  ended_at: NullableTimestamp;
}

/** One phase of a run as stored: its name, when it began (epoch ms) and how long it took. */
export interface RunPhaseRow {
  name: string;
  startedAt: number;
  durationMs: number;
}

export interface EventsTable {
  id: Generated<string>;
  project_id: string;
  task_id: string | null;
  run_id: string | null;
  type: string;
  data: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface DecisionsTable {
  project_id: string;
  id: string;
  item_id: string;
  revision: Defaulted<number>;
  status: "pending" | "resolved";
  title: string;
  reason: string;
  question: string;
  evidence: Json<unknown[]>;
  options: Json<unknown[]>;
  options_source: Defaulted<"agent" | "none">;
  selected_option: string | null;
  note: string | null;
  resolution_id: string | null;
  resolved_by: string | null;
  created_at: Timestamp;
  resolved_at: NullableTimestamp;
}

export interface IncidentsTable {
  id: Generated<string>;
  project_id: string;
  task_id: string | null;
  run_id: string | null;
  kind: string;
  message: string;
  details: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface LeasesTable {
  project_id: string;
  owner: string;
  expires_at: Timestamp;
  acquired_at: Timestamp;
}

export interface ApiTokensTable {
  id: string;
  name: string;
  scope: "read" | "operate" | "admin";
  token_hash: string;
  created_at: Timestamp;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
}

/** A forge webhook delivery, stored once by (forge, delivery_id); migration 0009. */
export interface ForgeWebhookDeliveriesTable {
  forge: "github" | "gitlab" | "gitea";
  delivery_id: string;
  project_id: string;
  event: string;
  action: string | null;
  payload: Json<unknown>;
  received_at: Timestamp;
  /** Set by the coordinator in the transaction that applies the delivery; null = still to apply. */
  applied_at: NullableTimestamp;
}

/** A task's pull request (domain `TaskPullRequest`) and the forge runner's polling state; migration 0010. */
export interface PullRequestsTable {
  project_id: string;
  task_id: string;
  number: number | null;
  url: string | null;
  branch: string;
  base: string;
  head_sha: string;
  status: "opening" | "open" | "merged" | "closed";
  checks: Defaulted<"pending" | "success" | "failure">;
  review: Defaulted<"none" | "approved" | "changes_requested">;
  approvals: Defaulted<number>;
  ci_failures: Defaulted<number>;
  merge_commit_sha: string | null;
  merged_by: string | null;
  /** ETag of the last conditional read of the pull request, its checks, its reviews (forge runner). */
  etag_pull: ColumnType<string | null, string | null | undefined, string | null>;
  etag_checks: ColumnType<string | null, string | null | undefined, string | null>;
  etag_reviews: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the forge runner last read the pull request (webhook or poll). */
  polled_at: NullableTimestamp;
  /** Forge API calls made for this task's pull request (metrics: calls per task). */
  api_calls: Defaulted<number>;
  /** Of those, the conditional reads answered 304 Not Modified (migration 0017). */
  api_not_modified: Defaulted<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A run's transcript (@overseer/transcript entries) beside its raw output; migration 0011. */
export interface RunTranscriptsTable {
  run_id: string;
  project_id: string;
  task_id: string;
  agent: string | null;
  entries: Json<unknown[]>;
  truncated: Defaulted<boolean>;
  /** JSON bytes of `entries`, within OVERSEER_MAX_TRANSCRIPT_BYTES. */
  bytes: number;
  created_at: Timestamp;
}

/** A live run's job (run-contract RunJob, unvalidated JSON: the worker parses it); migration 0025. */
export interface RunJobsTable {
  run_id: string;
  job: Json<unknown>;
}

export interface Database {
  projects: ProjectsTable;
  tasks: TasksTable;
  task_dependencies: TaskDependenciesTable;
  runs: RunsTable;
  events: EventsTable;
  decisions: DecisionsTable;
  incidents: IncidentsTable;
  leases: LeasesTable;
  api_tokens: ApiTokensTable;
  forge_webhook_deliveries: ForgeWebhookDeliveriesTable;
  pull_requests: PullRequestsTable;
  run_transcripts: RunTranscriptsTable;
  run_jobs: RunJobsTable;
  notification_subscriptions: NotificationSubscriptionsTable;
  notification_outbox: NotificationOutboxTable;
  notification_deliveries: NotificationDeliveriesTable;
  intake_sources: IntakeSourcesTable;
  intake_items: IntakeItemsTable;
  intake_webhook_deliveries: IntakeWebhookDeliveriesTable;
  tracker_updates: TrackerUpdatesTable;
}

/** A webhook signing secret (`whsec_…`); a rotated-out one signs until `expires_at` (ISO). */
export interface SubscriptionSecret {
  readonly secret: string;
  readonly created_at: string;
  readonly expires_at: string | null;
}

/** Where notifications go (migration 0015). */
export interface NotificationSubscriptionsTable {
  id: string;
  /** null: every project. */
  project_id: string | null;
  channel: "webhook" | "slack";
  url: string | null;
  slack_channel: string | null;
  /** Empty: every notification type. */
  event_types: Defaulted<string[]>;
  min_severity: Defaulted<"info" | "warning" | "critical">;
  secrets: Json<SubscriptionSecret[]>;
  enabled: Defaulted<boolean>;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One notified event (migration 0015), written with the event. */
export interface NotificationOutboxTable {
  id: Generated<string>;
  event_id: string;
  project_id: string;
  task_id: string | null;
  type: string;
  severity: "info" | "warning" | "critical";
  data: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

/** One outbox row to one subscription (migration 0015). */
export interface NotificationDeliveriesTable {
  id: Generated<string>;
  webhook_id: Generated<string>;
  outbox_id: string;
  subscription_id: string;
  project_id: string;
  status: Defaulted<"pending" | "delivered" | "dead">;
  attempts: Defaulted<number>;
  last_error: string | null;
  last_status: number | null;
  last_attempt_at: NullableTimestamp;
  delivered_at: NullableTimestamp;
  created_at: Timestamp;
  /** The Slack message this delivery posted (chat.postMessage's channel and ts; migration 0020). */
  slack_channel: string | null;
  slack_ts: string | null;
}

export type ProjectRow = Selectable<ProjectsTable>;
export type TaskRow = Selectable<TasksTable>;
export type RunRow = Selectable<RunsTable>;
export type EventRow = Selectable<EventsTable>;
export type DecisionRow = Selectable<DecisionsTable>;
export type IncidentRow = Selectable<IncidentsTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type ForgeDeliveryRow = Selectable<ForgeWebhookDeliveriesTable>;
export type PullRequestRow = Selectable<PullRequestsTable>;
export type RunTranscriptRow = Selectable<RunTranscriptsTable>;
export type NotificationSubscriptionRow = Selectable<NotificationSubscriptionsTable>;
export type NotificationOutboxRow = Selectable<NotificationOutboxTable>;
export type NotificationDeliveryRow = Selectable<NotificationDeliveriesTable>;
export type NewProject = Insertable<ProjectsTable>;
