/**
 * The forge loop's figures (issue 21, "Events in and out"), read from Postgres at scrape time:
 * pull requests by status, forge API calls by project (every attempt, retries included, as the
 * forge's quota sees them) and per task, and the conditional reads answered 304 (which GitHub
 * does not charge to the rate limit).
 */
import type { countPullRequests, ProjectBuckets } from "@overseer/db";
import { SnapshotMetric } from "./snapshot-metric.ts";

/** Upper bounds of the forge API calls per task histogram. */
export const FORGE_CALLS_PER_TASK_BUCKETS: readonly number[] = [5, 10, 25, 50, 100, 250, 500, 1000];

export interface ForgeSnapshot {
  readonly pullRequests: Awaited<ReturnType<typeof countPullRequests>> | null;
  readonly forgeCallsPerTask: readonly ProjectBuckets[] | null;
}

export function forgeMetrics(s: () => ForgeSnapshot): SnapshotMetric[] {
  const byProject = (value: (p: NonNullable<ForgeSnapshot["pullRequests"]>[number]) => number) => {
    const sums = new Map<string, number>();
    for (const p of s().pullRequests ?? []) sums.set(p.projectId, (sums.get(p.projectId) ?? 0) + value(p));
    return [...sums].map(([project, n]) => ({ labels: { project }, value: n }));
  };
  const perTask = "overseer_forge_api_calls_per_task";
  return [
    new SnapshotMetric(
      "overseer_pull_requests",
      "Pull requests of tasks (landing.mode pull_request) by project and status (opening, open, merged, closed).",
      "gauge",
      () =>
        (s().pullRequests ?? []).map((p) => ({
          labels: { project: p.projectId, status: p.status },
          value: p.count,
        })),
    ),
    new SnapshotMetric(
      "overseer_forge_api_calls_total",
      "Forge API calls the coordinator made for tasks' pull requests, by project (per task: pull_requests.api_calls).",
      "counter",
      () => byProject((p) => p.apiCalls),
    ),
    new SnapshotMetric(
      "overseer_forge_api_not_modified_total",
      "Of those, conditional reads the forge answered 304 Not Modified (GitHub does not charge them to the rate limit), by project.",
      "counter",
      () => byProject((p) => p.apiNotModified),
    ),
    new SnapshotMetric(
      perTask,
      "Forge API calls per task, over pull requests that ended (merged or closed), by project.",
      "histogram",
      () =>
        (s().forgeCallsPerTask ?? []).flatMap((p) => {
          const labels = { project: p.projectId };
          return [
            ...FORGE_CALLS_PER_TASK_BUCKETS.map((le, i) => ({
              metricName: `${perTask}_bucket`,
              labels: { ...labels, le: String(le) },
              value: p.cumulative[i] ?? 0,
            })),
            { metricName: `${perTask}_bucket`, labels: { ...labels, le: "+Inf" }, value: p.count },
            { metricName: `${perTask}_sum`, labels, value: p.sum },
            { metricName: `${perTask}_count`, labels, value: p.count },
          ];
        }),
    ),
  ];
}
