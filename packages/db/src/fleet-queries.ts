import type { Decision } from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { decisionFromRow } from "./row-mappers.ts";

/**
 * Read models of the operator web app that span every project: each project's row with its task
 * counts, active runs, pending cards and recently ended runs, and run statistics over a time
 * window.
 */

export interface FleetProjectRow {
  id: string;
  name: string;
  status: string;
  status_reason: string | null;
  stage: string | null;
  objective: string;
  sessions_used: number;
  sessions_limit: number | null;
  budget_usd: number | null;
  cost_usd: number;
  tokens_unpriced: string | number;
  tokens_in: string | number;
  tokens_out: string | number;
  updated_at: Date;
  counts: Record<string, number>;
  running: number;
  pending: number;
  /** When each of its runs that ended in the window ended (epoch ms, ascending). */
  ended_ms: number[];
}

/**
 * The fleet rows of the projects `ids` (null: of every project), ordered by id: a project that
 * does not exist has no row. Each subquery reads one project's rows through an index (counts by
 * status from its tasks, its active runs, its pending cards, its runs ended in the last
 * `windowSeconds` through `runs_project_ended_idx`, migration 0028), so reading a few projects costs what they hold, not what the fleet holds.
 */
export async function listFleetProjects(
  db: Db,
  ids: readonly string[] | null,
  windowSeconds: number,
): Promise<FleetProjectRow[]> {
  const only = ids === null ? sql`` : sql`WHERE p.id = ANY(${[...ids]}::text[])`;
  const result = await sql<FleetProjectRow>`
    SELECT p.id, p.name, p.status, p.status_reason, p.stage, p.objective, p.sessions_used,
      p.sessions_limit, p.budget_usd, p.cost_usd, p.tokens_unpriced, p.tokens_in, p.tokens_out, p.updated_at,
      COALESCE((
        SELECT jsonb_object_agg(s.status, s.n)
        FROM (SELECT status, count(*)::int AS n FROM tasks WHERE project_id = p.id GROUP BY status) s
      ), '{}'::jsonb) AS counts,
      (SELECT count(*)::int FROM runs r WHERE r.project_id = p.id AND r.status IN ('queued','running')) AS running,
      (SELECT count(*)::int FROM decisions d WHERE d.project_id = p.id AND d.status = 'pending') AS pending,
      ARRAY(
        SELECT (extract(epoch FROM r.ended_at) * 1000)::float8 FROM runs r
        WHERE r.project_id = p.id AND r.ended_at > now() - make_interval(secs => ${windowSeconds})
        ORDER BY r.ended_at
      ) AS ended_ms
    FROM projects p
    ${only}
    ORDER BY p.id`.execute(db);
  return result.rows;
}

export interface RunStatsBucket {
  /** Start of the bucket. */
  at: Date;
  runs: number;
  failed: number;
  p50_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
}

export interface RunCostBucket {
  at: Date;
  project_id: string;
  cost_usd: number;
}

/** Runs ended per bucket with duration percentiles, and cost per project per bucket. */
export async function runStats(
  db: Db,
  options: { since: Date; bucketSeconds: number; projectId?: string },
): Promise<{ buckets: RunStatsBucket[]; cost: RunCostBucket[] }> {
  const project = options.projectId ? sql`AND project_id = ${options.projectId}` : sql``;
  const bucket = sql`to_timestamp(floor(extract(epoch FROM ended_at) / ${options.bucketSeconds}) * ${options.bucketSeconds})`;
  const buckets = await sql<RunStatsBucket>`
    SELECT ${bucket} AS at, count(*)::int AS runs,
      count(*) FILTER (WHERE status = 'failed')::int AS failed,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50_ms,
      percentile_cont(0.9) WITHIN GROUP (ORDER BY duration_ms) AS p90_ms,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99_ms
    FROM runs
    WHERE ended_at IS NOT NULL AND ended_at >= ${options.since} ${project}
    GROUP BY 1 ORDER BY 1`.execute(db);
  const cost = await sql<RunCostBucket>`
    SELECT ${bucket} AS at, project_id, sum(cost_usd)::float8 AS cost_usd
    FROM runs
    WHERE ended_at IS NOT NULL AND ended_at >= ${options.since} ${project}
    GROUP BY 1, 2 ORDER BY 1, 2`.execute(db);
  return { buckets: buckets.rows, cost: cost.rows };
}

/** Every pending card across projects, oldest first, at most `limit`. */
export async function listPendingDecisionsAcrossProjects(db: Db, limit: number): Promise<Decision[]> {
  const rows = await db
    .selectFrom("decisions")
    .selectAll()
    .where("status", "=", "pending")
    .orderBy("created_at")
    .orderBy("project_id")
    .limit(limit)
    .execute();
  return rows.map(decisionFromRow);
}

/** The newest incidents of every project (scope violations, configuration stops, remediations). */
export async function listRecentIncidents(db: Db, limit: number) {
  return db.selectFrom("incidents").selectAll().orderBy("id", "desc").limit(limit).execute();
}
