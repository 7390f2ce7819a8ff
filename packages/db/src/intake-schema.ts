/** The tables of tracker intake (migration 0022). */
import type { ColumnType, Generated } from "kysely";

type Defaulted<T> = ColumnType<T, T | undefined, T>;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, unknown, unknown>;

export interface IntakeSourcesTable {
  id: string;
  project_id: string;
  kind: "github" | "gitlab" | "linear" | "jira";
  base_url: string | null;
  /** An IntakeQuery (`@overseer/intake`). */
  query: Json<Record<string, unknown>>;
  /** A partial IntakeSourceConfig; unset keys take the defaults. */
  config: Json<Record<string, unknown>>;
  /** Name of the host environment variable holding the token (never the token). */
  token_env: string;
  webhook_secret_env: string | null;
  enabled: Defaulted<boolean>;
  polled_at: NullableTimestamp;
  last_error: string | null;
  created_by: string;
  created_at: Timestamp;
}

export interface IntakeItemsTable {
  source_id: string;
  issue_id: string;
  issue_key: string;
  project_id: string;
  task_id: string | null;
  comment_cursor: string | null;
  cancelled_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface IntakeWebhookDeliveriesTable {
  source_id: string;
  delivery_id: string;
  issue_id: string;
  what: "issue" | "comment";
  received_at: Timestamp;
}

/** Two-way status, tracker side (migration 0023). */
export interface TrackerUpdatesTable {
  id: Generated<string>;
  key: string;
  source_id: string;
  issue_id: string;
  project_id: string;
  task_id: string;
  moment: "started" | "pr_opened" | "done" | "blocked" | "merged";
  occurrence: string;
  event_id: string | null;
  /** `pullRequestUrl`, `detail` (why blocked), `bound` (a pause at a bound: which one). */
  data: Json<Record<string, unknown>>;
  status: Defaulted<"pending" | "delivered" | "dead">;
  attempts: Defaulted<number>;
  last_error: string | null;
  last_attempt_at: NullableTimestamp;
  delivered_at: NullableTimestamp;
  created_at: Timestamp;
}
