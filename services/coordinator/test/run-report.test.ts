/** What the runs row keeps of a result: its phase timeline closed by `result_applied`. */
import type { RunPhase } from "@overseer/run-contract";
import { runResultFixture } from "@overseer/test-support";
import { describe, expect, it } from "vitest";
import { phaseTimeline, runReportOf } from "../src/run-report.ts";

const worker: RunPhase[] = [
  { name: "queue_wait", startedAt: 1000, durationMs: 250 },
  { name: "checkout", startedAt: 1250, durationMs: 50.5 },
  { name: "agent", startedAt: 1300.5, durationMs: 4000 },
  { name: "commit", startedAt: 5300.5, durationMs: 20 },
];

const base = runResultFixture({
  runId: "run-1",
  outcome: { kind: "no-transition", detail: "exited", crashed: false },
});
const withTiming = (timing: Partial<typeof base.timing>) =>
  runResultFixture({ ...base, timing: { ...base.timing, ...timing } });

describe("phaseTimeline", () => {
  it("appends result_applied from the end of the worker's phases to the transition, so they add up", () => {
    const result = withTiming({ timeline: worker });
    const phases = phaseTimeline(result, 5400);
    expect(phases.slice(0, 4)).toEqual(worker);
    expect(phases[4]).toEqual({ name: "result_applied", startedAt: 5320.5, durationMs: 79.5 });
    const total = phases.reduce((sum, p) => sum + p.durationMs, 0);
    expect(total).toBeCloseTo(5400 - 1000, 6);
  });

  it("a result without a timeline (an older worker) gets result_applied from its report", () => {
    const result = withTiming({ reportedAt: 900 });
    expect(phaseTimeline(result, 1000)).toEqual([
      { name: "result_applied", startedAt: 900, durationMs: 100 },
    ]);
  });

  it("never records a negative phase when the worker's clock runs ahead", () => {
    const result = withTiming({ timeline: worker });
    expect(phaseTimeline(result, 5000).at(-1)).toMatchObject({ name: "result_applied", durationMs: 0 });
  });
});

describe("runReportOf", () => {
  it("keeps the timeline out of timing: it is stored as the run's phases", () => {
    const report = runReportOf(withTiming({ timeline: worker }), 5350);
    expect(report.timing).not.toHaveProperty("timeline");
    expect(report.timing).toMatchObject({ received: 5350 });
  });
});
