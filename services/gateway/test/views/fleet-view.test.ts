import type { FleetProjectRow } from "@overseer/db";
import { describe, expect, it } from "vitest";
import { fleetView, runStatsView, throughputSeries } from "../../src/views/fleet-view.ts";

const HOUR = { windowSeconds: 3600, bucketSeconds: 300 };

function row(id: string, over: Partial<FleetProjectRow> = {}): FleetProjectRow {
  return {
    id,
    name: `Project ${id}`,
    status: "active",
    status_reason: null,
    stage: null,
    objective: "",
    sessions_used: 3,
    sessions_limit: 10,
    budget_usd: 5,
    cost_usd: 1.25,
    tokens_unpriced: "0",
    tokens_in: "1200",
    tokens_out: 340,
    updated_at: new Date("2026-01-02T03:04:05.000Z"),
    counts: {},
    running: 0,
    pending: 0,
    ended_ms: [],
    ...over,
  };
}

describe("throughputSeries", () => {
  const now = Date.parse("2026-01-02T04:00:00.000Z");
  const ago = (seconds: number) => now - seconds * 1000;

  it("counts the runs of each bucket, the most recent bucket last, and fills the others with zeros", () => {
    expect(throughputSeries([ago(3599), ago(299), ago(10), ago(1), ago(0)], HOUR, now)).toEqual([
      1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4,
    ]);
    expect(throughputSeries([ago(600), ago(899)], HOUR, now)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0]);
  });

  it("leaves out runs that ended before the window, and counts one ended after now (a clock ahead) as the latest", () => {
    expect(throughputSeries([ago(3600), ago(7200)], HOUR, now)).toEqual(new Array(12).fill(0));
    expect(throughputSeries([now + 2000], HOUR, now)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
  });
});

describe("fleetView", () => {
  const now = new Date("2026-01-02T04:00:00.000Z");

  it("adds the total to the counts, turns numerics into numbers and times into ISO strings", () => {
    const fleet = fleetView(
      [
        row("a", {
          counts: { todo: 2, done: 5 },
          running: 1,
          pending: 2,
          ended_ms: [1, 2, 3].map((s) => now.getTime() - s * 1000),
        }),
      ],
      HOUR,
      now,
    );
    expect(fleet).toEqual({
      projects: [
        {
          id: "a",
          name: "Project a",
          status: "active",
          status_reason: null,
          stage: null,
          objective: "",
          counts: { todo: 2, done: 5, total: 7 },
          running: 1,
          pending_decisions: 2,
          sessions: { used: 3, limit: 10 },
          budget_usd: 5,
          cost_usd: 1.25,
          tokens_unpriced: 0,
          cost: "$1.25",
          tokens_in: 1200,
          tokens_out: 340,
          throughput: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3],
          updated_at: "2026-01-02T03:04:05.000Z",
        },
      ],
      window_seconds: 3600,
      bucket_seconds: 300,
      generated_at: "2026-01-02T04:00:00.000Z",
    });
  });

  it("shows unpriced usage as unpriced, never $0.00, and a cost without float noise", () => {
    const [unpriced, both, noisy] = fleetView(
      [
        row("u", { cost_usd: 0, tokens_unpriced: "1600000" }),
        row("b", { cost_usd: 0.25, tokens_unpriced: 1241 }),
        row("n", { cost_usd: 0.009084000000000002 }),
      ],
      HOUR,
      now,
    ).projects;
    expect(unpriced).toMatchObject({
      cost_usd: 0,
      tokens_unpriced: 1_600_000,
      cost: "unpriced (1,600,000 tokens)",
    });
    expect(both).toMatchObject({ cost: "$0.2500 + unpriced (1,241 tokens)" });
    expect(noisy).toMatchObject({ cost_usd: 0.009084, cost: "$0.0091" });
  });

  it("gives a project without ended runs a series of zeros and an empty count a total of 0", () => {
    const [project] = fleetView([row("quiet")], HOUR, now).projects;
    expect(project?.throughput).toEqual(new Array(12).fill(0));
    expect(project?.counts).toEqual({ total: 0 });
  });
});

describe("runStatsView", () => {
  it("answers each bucket and each project's cost per bucket with ISO times, keeping null percentiles", () => {
    const at = new Date("2026-01-02T03:00:00.000Z");
    const stats = runStatsView(
      {
        buckets: [
          {
            at,
            runs: 4,
            failed: 1,
            p50_ms: 1500.5,
            p90_ms: 3000,
            p99_ms: null,
          },
        ],
        cost: [{ at, project_id: "a", cost_usd: 0.75 }],
      },
      new Date("2026-01-02T02:00:00.000Z"),
      60,
    );
    expect(stats).toEqual({
      since: "2026-01-02T02:00:00.000Z",
      bucket_seconds: 60,
      buckets: [
        { at: "2026-01-02T03:00:00.000Z", runs: 4, failed: 1, p50_ms: 1500.5, p90_ms: 3000, p99_ms: null },
      ],
      cost: [{ at: "2026-01-02T03:00:00.000Z", project_id: "a", cost_usd: 0.75 }],
    });
  });

  it("answers a bucket's summed cost without float noise", () => {
    const at = new Date("2026-01-02T03:00:00.000Z");
    const stats = runStatsView(
      { buckets: [], cost: [{ at, project_id: "a", cost_usd: 0.1 + 0.2 }] },
      new Date("2026-01-02T02:00:00.000Z"),
      60,
    );
    expect(stats.cost[0]?.cost_usd).toBe(0.3);
  });
});
