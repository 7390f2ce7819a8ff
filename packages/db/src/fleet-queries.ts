import type { Decision } from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { decisionFromRow } from "./row-mappers.ts";

/**
 * Read models of the operator web app that span every project: one row per project with its
 * task counts, active runs and pending cards (three grouped scans over indexed columns, not a
 * query per project), recent throughput, and run statistics over a time window.
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
}

export async function listFleet(db: Db): Promise<FleetProjectRow[]> {
  const result = await sql<FleetProjectRow>`
    SELECT p.id, p.name, p.status, p.status_reason, p.stage, p.objective, p.sessions_used,
      p.sessions_limit, p.budget_usd, p.cost_usd, p.tokens_unpriced, p.tokens_in, p.tokens_out, p.updated_at,
      COALESCE(t.counts, '{}'::jsonb) AS counts,
      COALESCE(r.n, 0)::int AS running,
      COALESCE(d.n, 0)::int AS pending
    FROM projects p
    LEFT JOIN (
      SELECT project_id, jsonb_object_agg(status, n) AS counts
      FROM (SELECT project_id, status, count(*)::int AS n FROM tasks GROUP BY project_id, status) s
      GROUP BY project_id
    ) t ON t.project_id = p.id
    LEFT JOIN (
      SELECT project_id, count(*) AS n FROM runs WHERE status IN ('queued','running') GROUP BY project_id
    ) r ON r.project_id = p.id
    LEFT JOIN (
      SELECT project_id, count(*) AS n FROM decisions WHERE status = 'pending' GROUP BY project_id
    ) d ON d.project_id = p.id
    ORDER BY p.id`.execute(db);
  return result.rows;
}

export interface ThroughputRow {
  project_id: string;
  /** 0 = the most recent bucket. */
  bucket: number;
  runs: number;
}

/** Runs ended per project per `bucketSeconds` over the last `windowSeconds`. */
export async function runThroughput(
  db: Db,
  windowSeconds: number,
  bucketSeconds: number,
): Promise<ThroughputRow[]> {
  const result = await sql<ThroughputRow>`
    SELECT project_id,
      floor(extract(epoch FROM (now() - ended_at)) / ${bucketSeconds})::int AS bucket,
      count(*)::int AS runs
    FROM runs
    WHERE ended_at IS NOT NULL AND ended_at > now() - make_interval(secs => ${windowSeconds})
    GROUP BY 1, 2`.execute(db);
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
