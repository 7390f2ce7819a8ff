import type { z } from "@hono/zod-openapi";
import type { FleetSchema, RunStatsSchema } from "@overseer/api-contract";
import type { FleetProjectRow, RunCostBucket, RunStatsBucket, ThroughputRow } from "@overseer/db";
import { roundUsd } from "@overseer/domain";
import { spendView } from "./resource-views.ts";

type Fleet = z.output<typeof FleetSchema>;
type RunStats = z.output<typeof RunStatsSchema>;

/** How the fleet's throughput is counted: runs ended per `bucketSeconds` over the last `windowSeconds`. */
export interface ThroughputWindow {
  readonly windowSeconds: number;
  readonly bucketSeconds: number;
}

/**
 * Each project's throughput series, oldest bucket first: `windowSeconds / bucketSeconds` counts
 * from rows whose `bucket` is 0 for the most recent bucket. Rows outside the window are dropped.
 */
export function throughputSeries(
  rows: readonly ThroughputRow[],
  window: ThroughputWindow,
): Map<string, number[]> {
  const buckets = window.windowSeconds / window.bucketSeconds;
  const series = new Map<string, number[]>();
  for (const t of rows) {
    if (t.bucket < 0 || t.bucket >= buckets) continue;
    let s = series.get(t.project_id);
    if (!s) {
      s = new Array<number>(buckets).fill(0);
      series.set(t.project_id, s);
    }
    s[buckets - 1 - t.bucket] = t.runs;
  }
  return series;
}

/** The fleet overview: every project with its counts (and their total), spend and throughput. */
export function fleetView(
  rows: readonly FleetProjectRow[],
  throughput: readonly ThroughputRow[],
  window: ThroughputWindow,
  now: Date,
): Fleet {
  const series = throughputSeries(throughput, window);
  const empty = new Array<number>(window.windowSeconds / window.bucketSeconds).fill(0);
  const projects = rows.map((r) => {
    const counts: Record<string, number> = { ...r.counts };
    counts.total = Object.values(r.counts).reduce((a, b) => a + b, 0);
    return {
      id: r.id,
      name: r.name,
      status: r.status as "active" | "paused" | "stopped",
      status_reason: r.status_reason,
      stage: r.stage,
      objective: r.objective,
      counts,
      running: r.running,
      pending_decisions: r.pending,
      sessions: { used: r.sessions_used, limit: r.sessions_limit },
      budget_usd: r.budget_usd,
      ...spendView(r),
      tokens_in: Number(r.tokens_in),
      tokens_out: Number(r.tokens_out),
      throughput: series.get(r.id) ?? empty,
      updated_at: new Date(r.updated_at).toISOString(),
    };
  });
  return {
    projects,
    window_seconds: window.windowSeconds,
    bucket_seconds: window.bucketSeconds,
    generated_at: now.toISOString(),
  };
}

/** Run statistics for charts: Postgres numerics (percentiles, sums) as numbers, times as ISO strings. */
export function runStatsView(
  stats: { readonly buckets: readonly RunStatsBucket[]; readonly cost: readonly RunCostBucket[] },
  since: Date,
  bucketSeconds: number,
): RunStats {
  const num = (v: number | string | null) => (v === null ? null : Number(v));
  return {
    since: since.toISOString(),
    bucket_seconds: bucketSeconds,
    buckets: stats.buckets.map((b) => ({
      at: new Date(b.at).toISOString(),
      runs: b.runs,
      failed: b.failed,
      p50_ms: num(b.p50_ms),
      p90_ms: num(b.p90_ms),
      p99_ms: num(b.p99_ms),
    })),
    cost: stats.cost.map((b) => ({
      at: new Date(b.at).toISOString(),
      project_id: b.project_id,
      cost_usd: roundUsd(Number(b.cost_usd)),
    })),
  };
}
