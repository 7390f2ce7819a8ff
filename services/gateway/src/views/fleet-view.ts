import type { z } from "@hono/zod-openapi";
import type { FleetProjectSchema, FleetSchema, RunStatsSchema } from "@overseer/api-contract";
import type { FleetProjectRow, RunCostBucket, RunStatsBucket } from "@overseer/db";
import { roundUsd } from "@overseer/domain";
import { spendView } from "./resource-views.ts";

type Fleet = z.output<typeof FleetSchema>;
type FleetProject = z.output<typeof FleetProjectSchema>;
type RunStats = z.output<typeof RunStatsSchema>;

/** How the fleet's throughput is counted: runs ended per `bucketSeconds` over the last `windowSeconds`. */
export interface ThroughputWindow {
  readonly windowSeconds: number;
  readonly bucketSeconds: number;
}

/**
 * A project's throughput series at `nowMs`, oldest bucket first: how many of `endedMs` (when its
 * runs ended, epoch ms) fall in each `bucketSeconds` of the last `windowSeconds`, the most recent
 * bucket last. A run ending after `nowMs` (a clock ahead of this one) counts in the most recent.
 */
export function throughputSeries(
  endedMs: readonly number[],
  window: ThroughputWindow,
  nowMs: number,
): number[] {
  const buckets = window.windowSeconds / window.bucketSeconds;
  const series = new Array<number>(buckets).fill(0);
  const bucketMs = window.bucketSeconds * 1000;
  for (const t of endedMs) {
    const bucket = Math.max(0, Math.floor((nowMs - t) / bucketMs));
    if (bucket < buckets) series[buckets - 1 - bucket] = (series[buckets - 1 - bucket] ?? 0) + 1;
  }
  return series;
}

/** One project of the fleet overview: its counts (and their total), spend and throughput. */
export function fleetProjectView(r: FleetProjectRow, throughput: number[]): FleetProject {
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
    throughput,
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

/** The fleet overview: every project with its counts (and their total), spend and throughput. */
export function fleetView(rows: readonly FleetProjectRow[], window: ThroughputWindow, now: Date): Fleet {
  return {
    projects: rows.map((r) => fleetProjectView(r, throughputSeries(r.ended_ms, window, now.getTime()))),
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
