import type { Decision, MissionSummaryInput, TaskPullRequest } from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { DecisionRow, ProjectRow, PullRequestRow } from "./database-schema.ts";
import { loadMissionSummaryInput } from "./mission-queries.ts";
import { pullRequestFromRow } from "./pull-request-repository.ts";
import { decisionFromRow } from "./row-mappers.ts";
import { runNumberSql } from "./run-repository.ts";

/**
 * Read models of the HTTP gateway. The status route is the operator's polling loop (docs/argus-compatibility.md),
 * so it is one round trip: the project row plus four indexed
 * sub-selects (tasks by status, active runs, pending cards, open pull requests) aggregated as JSON; a project with
 * a mission takes a second statement for its summary (`loadMissionSummaryInput`).
 */

/** A queued or running run, without its prompt and output. */
export interface ActiveRunSummary {
  readonly id: string;
  readonly taskId: string;
  readonly agentId: string;
  readonly action: string;
  readonly attempt: number;
  /** Its number among the task's runs of this action (runNumberSql). */
  readonly number: number;
  readonly status: string;
  readonly workerId: string | null;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
}

export interface ProjectStatusData {
  readonly project: ProjectRow;
  /** Task count per status; statuses without tasks are absent. */
  readonly counts: Record<string, number>;
  /** Queued and running runs, oldest first. */
  readonly activeRuns: readonly ActiveRunSummary[];
  /** Pending decision cards, oldest first. */
  readonly pendingDecisions: readonly Decision[];
  /** What the mission summary is computed from (`summarizeMission`); null without a mission. */
  readonly mission: MissionSummaryInput | null;
  /** Pull requests still opening or open, by task id, with the task's title. */
  readonly openPullRequests: readonly OpenPullRequest[];
}

/** A pull request still opening or open, with its task. */
export interface OpenPullRequest {
  readonly taskId: string;
  readonly title: string;
  readonly pullRequest: TaskPullRequest;
}

interface StatusRow extends ProjectRow {
  task_counts: Record<string, number>;
  active_runs: {
    id: string;
    task_id: string;
    agent_id: string;
    action: string;
    attempt: number;
    number: number;
    status: string;
    worker_id: string | null;
    created_at: string;
    started_at: string | null;
  }[];
  pending_decisions: (Omit<DecisionRow, "created_at" | "resolved_at"> & {
    created_at: string;
    resolved_at: string | null;
  })[];
  open_pull_requests: (PullRequestRow & { title: string })[];
}

/** Project, counts, active runs and pending cards in one statement; undefined if no such project. */
export async function loadProjectStatus(db: Db, projectId: string): Promise<ProjectStatusData | undefined> {
  const result = await sql<StatusRow>`
    SELECT p.*,
      COALESCE((
        SELECT jsonb_object_agg(s.status, s.n)
        FROM (SELECT status, count(*)::int AS n FROM tasks WHERE project_id = p.id GROUP BY status) s
      ), '{}'::jsonb) AS task_counts,
      COALESCE((
        SELECT jsonb_agg(jsonb_build_object(
          'id', r.id, 'task_id', r.task_id, 'agent_id', r.agent_id, 'action', r.action,
          'attempt', r.attempt, 'number', ${runNumberSql("r")}, 'status', r.status, 'worker_id', r.worker_id,
          'created_at', r.created_at, 'started_at', r.started_at
        ) ORDER BY r.created_at, r.id)
        FROM runs r WHERE r.project_id = p.id AND r.status IN ('queued', 'running')
      ), '[]'::jsonb) AS active_runs,
      COALESCE((
        SELECT jsonb_agg(to_jsonb(d) ORDER BY d.created_at, d.id)
        FROM decisions d WHERE d.project_id = p.id AND d.status = 'pending'
      ), '[]'::jsonb) AS pending_decisions,
      COALESCE((
        SELECT jsonb_agg(to_jsonb(pr) || jsonb_build_object('title', t.title) ORDER BY pr.task_id)
        FROM pull_requests pr JOIN tasks t ON t.project_id = pr.project_id AND t.id = pr.task_id
        WHERE pr.project_id = p.id AND pr.status IN ('opening', 'open')
      ), '[]'::jsonb) AS open_pull_requests
    FROM projects p
    WHERE p.id = ${projectId}`.execute(db);
  const row = result.rows[0];
  if (!row) return undefined;
  const { task_counts, active_runs, pending_decisions, open_pull_requests, ...project } = row;
  return {
    project: project as ProjectRow,
    counts: task_counts,
    // A second statement only for a project with a mission.
    mission: await loadMissionSummaryInput(db, project as ProjectRow, task_counts),
    activeRuns: active_runs.map((r) => ({
      id: r.id,
      taskId: r.task_id,
      agentId: r.agent_id,
      action: r.action,
      attempt: r.attempt,
      number: r.number,
      status: r.status,
      workerId: r.worker_id,
      createdAt: new Date(r.created_at),
      startedAt: r.started_at ? new Date(r.started_at) : null,
    })),
    openPullRequests: open_pull_requests.map((pr) => ({
      taskId: pr.task_id,
      title: pr.title,
      pullRequest: pullRequestFromRow(pr),
    })),
    pendingDecisions: pending_decisions.map((d) =>
      decisionFromRow({
        ...d,
        created_at: new Date(d.created_at),
        resolved_at: d.resolved_at ? new Date(d.resolved_at) : null,
      }),
    ),
  };
}

/** Highest event id of a project (the live stream's starting point), or null when it has none. */
export async function latestEventId(db: Db, projectId?: string): Promise<string | null> {
  let q = db.selectFrom("events").select((eb) => eb.fn.max("id").as("id"));
  if (projectId !== undefined) q = q.where("project_id", "=", projectId);
  const row = await q.executeTakeFirst();
  return row?.id === undefined || row.id === null ? null : String(row.id);
}

/** Round trip to the server, for readiness probes. */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

/** Run outcomes recorded as events (`run.finished` by transition, `run.failed`, `run.cancelled`). */
export async function countRunOutcomes(
  db: Db,
): Promise<{ outcome: string; transition: string; count: number }[]> {
  const result = await sql<{ type: string; transition: string; n: number }>`
    SELECT type, COALESCE(data->>'transition', '') AS transition, count(*)::int AS n
    FROM events
    WHERE type IN ('run.finished', 'run.failed', 'run.cancelled')
    GROUP BY 1, 2`.execute(db);
  return result.rows.map((r) => ({
    outcome: r.type.slice("run.".length),
    transition: r.transition,
    count: r.n,
  }));
}

/** Number of events per type: every transition appends at least one. */
export async function countEventsByType(db: Db): Promise<Record<string, number>> {
  const result = await sql<{ type: string; n: number }>`
    SELECT type, count(*)::int AS n FROM events GROUP BY type`.execute(db);
  return Object.fromEntries(result.rows.map((r) => [r.type, r.n]));
}

export interface DurationBuckets {
  /** Cumulative count of ended runs whose duration is at most each bound, in bound order. */
  readonly cumulative: readonly number[];
  readonly count: number;
  readonly sumSeconds: number;
}

/** Histogram of recorded durations of ended runs, computed in SQL (cumulative buckets). */
export async function runDurationBuckets(db: Db, boundsSeconds: readonly number[]): Promise<DurationBuckets> {
  const filters = boundsSeconds.map(
    (b, i) => sql`count(*) FILTER (WHERE duration_ms <= ${Math.round(b * 1000)})::int AS ${sql.ref(`b${i}`)}`,
  );
  const result = await sql<Record<string, number>>`
    SELECT ${sql.join([...filters, sql`count(*)::int AS n`, sql`COALESCE(sum(duration_ms), 0)::float8 AS total_ms`])}
    FROM runs
    WHERE duration_ms IS NOT NULL AND status IN ('finished', 'failed', 'cancelled')`.execute(db);
  const row = result.rows[0] ?? {};
  return {
    cumulative: boundsSeconds.map((_, i) => Number(row[`b${i}`] ?? 0)),
    count: Number(row.n ?? 0),
    sumSeconds: Number(row.total_ms ?? 0) / 1000,
  };
}

/**
 * A cheap token that changes whenever a transition touches the project (its last event id)
 * or its row changes (version: start, config, status): two index lookups. Task imports
 * change neither (they only NOTIFY). Null when the project does not exist.
 */
export async function projectChangeToken(db: Db, projectId: string): Promise<string | null> {
  const result = await sql<{ version: number; last_event: string | null }>`
    SELECT p.version,
      (SELECT e.id FROM events e WHERE e.project_id = p.id ORDER BY e.id DESC LIMIT 1) AS last_event
    FROM projects p
    WHERE p.id = ${projectId}`.execute(db);
  const row = result.rows[0];
  return row ? `${row.version}:${row.last_event ?? 0}` : null;
}
