import { useMemo, useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { RunStats } from "../api/types.ts";
import { Chart, type ChartSeries } from "../components/chart.tsx";
import { Empty, Load } from "../components/states.tsx";
import { useLoad } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";

const RANGES = [
  { label: "last hour", minutes: 60, bucket: 60 },
  { label: "last 6 hours", minutes: 360, bucket: 300 },
  { label: "last day", minutes: 1440, bucket: 900 },
  { label: "last week", minutes: 10_080, bucket: 3600 },
] as const;
const COLORS = [
  "#2f5fd0",
  "#c2410c",
  "#15803d",
  "#a21caf",
  "#0e7490",
  "#b45309",
  "#be123c",
  "#4d7c0f",
  "#6b7280",
];

/**
 * Runs per minute, run duration percentiles, and cost per project over time, from stored runs;
 * for every project or one (`#/charts/{project}`). The time axis spans the chosen range
 * whatever the data: one bucket or none still shows the whole hour, day or week.
 */
export function ChartsView({ project }: { project: string | null }) {
  const [range, setRange] = useState(0);
  const r = RANGES[range] ?? RANGES[0];
  const stats = useLoad(
    () => client.stats(r.minutes, r.bucket, project),
    `stats:${range}:${project ?? ""}`,
    15_000,
  );
  const projects = useLoad(() => client.projects(), "projects");
  return (
    <section aria-labelledby="charts-title">
      <h1 id="charts-title">Charts</h1>
      <div class="toolbar">
        <label>
          Range{" "}
          <select
            value={range}
            onChange={(e) => setRange(Number((e.currentTarget as HTMLSelectElement).value))}
          >
            {RANGES.map((x, i) => (
              <option key={x.label} value={i}>
                {x.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Project{" "}
          <select
            data-testid="charts-project"
            value={project ?? ""}
            onChange={(e) => {
              location.hash = href.charts((e.currentTarget as HTMLSelectElement).value || null);
            }}
          >
            <option value="">all projects</option>
            {project && !projects.data?.projects.some((p) => p.id === project) ? (
              <option value={project}>{project}</option>
            ) : null}
            {(projects.data?.projects ?? []).map((p) => (
              <option key={p.id} value={p.id}>
                {p.id}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Load state={stats} what="run statistics">
        {(s) => (
          <>
            {s.buckets.length === 0 ? <Empty>No run ended in this range.</Empty> : null}
            <Charts stats={s} minutes={r.minutes} />
          </>
        )}
      </Load>
    </section>
  );
}

/** The time axis: from the bucket holding the window's start to the window's end (the answer's "now"). */
function timeWindow(stats: RunStats, minutes: number): readonly [number, number] {
  const since = Date.parse(stats.since) / 1000;
  return [Math.floor(since / stats.bucket_seconds) * stats.bucket_seconds, since + minutes * 60];
}

function Charts({ stats, minutes }: { stats: RunStats; minutes: number }) {
  const data = useMemo(() => {
    const times = stats.buckets.map((b) => Date.parse(b.at) / 1000);
    const perMinute = stats.bucket_seconds / 60;
    const throughput: ChartSeries[] = [
      { label: "runs/min", color: COLORS[0] as string, values: stats.buckets.map((b) => b.runs / perMinute) },
      {
        label: "failed/min",
        color: COLORS[6] as string,
        values: stats.buckets.map((b) => b.failed / perMinute),
      },
    ];
    const durations: ChartSeries[] = (["p50_ms", "p90_ms", "p99_ms"] as const).map((k, i) => ({
      label: k.replace("_ms", ""),
      color: COLORS[i] as string,
      values: stats.buckets.map((b) => (b[k] === null ? null : (b[k] as number) / 1000)),
    }));
    const totals = new Map<string, number>();
    for (const c of stats.cost) totals.set(c.project_id, (totals.get(c.project_id) ?? 0) + c.cost_usd);
    const top = [...totals.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([id]) => id);
    const index = new Map(times.map((t, i) => [t, i]));
    const cost: ChartSeries[] = [...top, "other"].map((id, i) => ({
      label: id,
      color: COLORS[i] as string,
      values: times.map(() => 0),
    }));
    for (const c of stats.cost) {
      const i = index.get(Date.parse(c.at) / 1000);
      if (i === undefined) continue;
      const k = top.indexOf(c.project_id);
      const s = cost[k >= 0 ? k : cost.length - 1];
      if (s) s.values[i] = (s.values[i] ?? 0) + c.cost_usd;
    }
    return {
      times,
      throughput,
      durations,
      cost: totals.size > top.length ? cost : cost.slice(0, -1),
      window: timeWindow(stats, minutes),
    };
  }, [stats, minutes]);
  return (
    <div class="charts">
      <Chart
        title="Runs per minute"
        times={data.times}
        series={data.throughput}
        unit="runs/min"
        range={data.window}
      />
      <Chart
        title="Run duration percentiles"
        times={data.times}
        series={data.durations}
        unit="s"
        range={data.window}
      />
      <Chart title="Cost per project" times={data.times} series={data.cost} unit="USD" range={data.window} />
    </div>
  );
}
