import type { Decision, ProjectState, Run, Task } from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { DecisionRow, ProjectRow, PullRequestRow, RunRow, TaskRow } from "./database-schema.ts";
import { LeaseLostError, NotFoundError } from "./db-errors.ts";
import { pullRequestFromRow } from "./pull-request-repository.ts";
import {
  decisionFromRow,
  PROJECT_CONTROL_COLUMNS,
  type ProjectControlColumn,
  projectControlFromRow,
  runFromRow,
  taskFromRow,
} from "./row-mappers.ts";

/**
 * The project row's columns the state machine reads, not the whole row: its runner config
 * (prompts, files, secrets) is no input of a transition, and came back as JSON with every one.
 */
const PROJECT_CONTROL = sql.raw(PROJECT_CONTROL_COLUMNS.join(", "));

export interface LoadStateOptions {
  /** Runs to include even if they already ended (the run a command names). */
  runIds?: readonly string[];
  /** Decisions to include even if resolved. */
  decisionIds?: readonly string[];
  /**
   * A coordinator's id: the same statement checks and holds its lease on the project (as
   * holdLease does, FOR KEY SHARE until the transaction ends), LeaseLostError when it holds none.
   */
  leaseOwner?: string | undefined;
}

/**
 * Loads what the state machine needs for one project: the project row, every task with its
 * prerequisites and pull request, every active run (plus named runs), every pending decision
 * (plus named ones). One statement, whatever the number of tasks: each part comes back as a
 * JSON array (timestamps revived as Dates), so a transition pays one round trip for its input.
 */
export async function loadProjectState(
  db: Db,
  projectId: string,
  options: LoadStateOptions = {},
): Promise<ProjectState> {
  return (await loadProjectStateAndIntake(db, projectId, options)).state;
}

/**
 * loadProjectState, and the tasks of the project that came from an intake item (not
 * cancelled), read by the same statement: a transition writes tracker updates only for those
 * (tracker-update-repository.ts), so a project without intake pays no statement for them.
 */
export async function loadProjectStateAndIntake(
  db: Db,
  projectId: string,
  options: LoadStateOptions = {},
): Promise<{ state: ProjectState; intakeTaskIds: ReadonlySet<string> }> {
  const runIds = [...(options.runIds ?? [])];
  const decisionIds = [...(options.decisionIds ?? [])];
  const owner = options.leaseOwner;
  const lease =
    owner === undefined
      ? sql``
      : sql`(SELECT l.owner FROM leases l WHERE l.project_id = ${projectId} AND l.owner = ${owner}
           AND l.expires_at > now() FOR KEY SHARE) AS lease_owner,`;
  // The (resolved) card of a named run's task is loaded too: a re-asked card must grow its
  // revision instead of being inserted twice (decisionIdFor: `decision-<task>`).
  const { rows } = await sql<StateParts>`
    SELECT ${lease}
      (SELECT row_to_json(p) FROM (SELECT ${PROJECT_CONTROL} FROM projects WHERE id = ${projectId}) p) AS project,
      (SELECT coalesce(json_agg(t), '[]') FROM tasks t WHERE t.project_id = ${projectId}) AS tasks,
      (SELECT coalesce(json_agg(json_build_array(d.task_id, d.depends_on)), '[]')
         FROM task_dependencies d WHERE d.project_id = ${projectId}) AS deps,
      (SELECT coalesce(json_agg(r), '[]') FROM (
         SELECT id, project_id, task_id, agent_id, action, attempt, status, transition, failure,
                not_before, created_at, worker_id, started_at
         FROM runs
         WHERE project_id = ${projectId}
           AND (status IN ('queued', 'running') OR id = ANY(${runIds}::text[]))) r) AS runs,
      (SELECT coalesce(json_agg(c), '[]') FROM decisions c
         WHERE c.project_id = ${projectId}
           AND (c.status = 'pending' OR c.id = ANY(${decisionIds}::text[])
             OR c.id IN (SELECT 'decision-' || n.task_id FROM runs n
                         WHERE n.project_id = ${projectId} AND n.id = ANY(${runIds}::text[])))) AS decisions,
      (SELECT coalesce(json_agg(q), '[]') FROM pull_requests q WHERE q.project_id = ${projectId}) AS pull_requests,
      (SELECT coalesce(json_agg(i.task_id), '[]') FROM intake_items i
         WHERE i.project_id = ${projectId} AND i.task_id IS NOT NULL AND i.cancelled_at IS NULL) AS intake_tasks`.execute(
    db,
  );
  const parts = rows[0];
  if (owner !== undefined && parts?.lease_owner !== owner) throw new LeaseLostError(projectId, owner);
  if (!parts?.project) throw new NotFoundError(`Project ${projectId} does not exist.`);
  const prereqs = new Map<string, string[]>();
  for (const [taskId, dependsOn] of parts.deps) {
    const list = prereqs.get(taskId) ?? [];
    list.push(dependsOn);
    prereqs.set(taskId, list);
  }
  const pullRequests = new Map(
    parts.pull_requests.map((r) => [
      r.task_id as string,
      pullRequestFromRow(revive<PullRequestRow>(r, PULL_REQUEST_DATES)),
    ]),
  );
  const tasks = new Map<string, Task>(
    parts.tasks.map((raw) => {
      const r = revive<TaskRow>(raw, TASK_DATES);
      return [r.id, taskFromRow(r, prereqs.get(r.id) ?? [], pullRequests.get(r.id) ?? null)];
    }),
  );
  const runs = new Map<string, Run>(
    parts.runs.map((r) => [r.id as string, runFromRow(revive<RunRow>(r, RUN_DATES))]),
  );
  const decisions = new Map<string, Decision>(
    parts.decisions.map((r) => [r.id as string, decisionFromRow(revive<DecisionRow>(r, DECISION_DATES))]),
  );
  const state: ProjectState = {
    project: projectControlFromRow(parts.project as unknown as Pick<ProjectRow, ProjectControlColumn>),
    tasks,
    runs,
    decisions,
  };
  return { state, intakeTaskIds: new Set(parts.intake_tasks) };
}

/** The parts of loadProjectState's one row, as JSON gives them (timestamps as strings). */
interface StateParts {
  /** The coordinator whose lease the statement holds (asked for by `leaseOwner`), or null. */
  lease_owner?: string | null;
  project: Record<string, unknown> | null;
  tasks: Record<string, unknown>[];
  deps: [string, string][];
  runs: Record<string, unknown>[];
  decisions: Record<string, unknown>[];
  pull_requests: Record<string, unknown>[];
  intake_tasks: string[];
}

const TASK_DATES = ["not_before", "created_at", "updated_at"] as const;
const RUN_DATES = ["not_before", "created_at", "started_at"] as const;
const DECISION_DATES = ["created_at", "resolved_at"] as const;
const PULL_REQUEST_DATES = ["polled_at", "created_at", "updated_at"] as const;

/**
 * A row from its JSON form: the timestamp columns back to Dates (as the driver gives them,
 * to the millisecond). The other columns read the same in JSON: text, integers, booleans,
 * arrays and jsonb; the mappers read no bigint or numeric column of these tables.
 */
function revive<Row>(json: Record<string, unknown>, dates: readonly string[]): Row {
  const row: Record<string, unknown> = { ...json };
  for (const column of dates) {
    const value = row[column];
    row[column] = typeof value === "string" ? new Date(value) : null;
  }
  return row as Row;
}

/** loadProjectState from one consistent snapshot (a read-only REPEATABLE READ transaction). */
export async function loadProjectSnapshot(
  db: Db,
  projectId: string,
  options: LoadStateOptions = {},
): Promise<ProjectState> {
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .setAccessMode("read only")
    .execute((trx) => loadProjectState(trx, projectId, options));
}
