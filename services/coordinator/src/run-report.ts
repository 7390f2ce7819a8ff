import type { ApplyOptions } from "@overseer/db";
import { type RunPhase, type RunResult, timelineEnd } from "@overseer/run-contract";

/**
 * What the runs row keeps of a worker's result, whatever command the result becomes, but its
 * phases (`phaseTimeline`, which needs the transition's time).
 */
export function runReportOf(result: RunResult, receivedAt: number): NonNullable<ApplyOptions["runReport"]> {
  // The timeline is stored as the run's phases, not twice.
  const { timeline: _timeline, ...timing } = result.timing;
  return {
    workerId: result.workerId,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.outcome.kind === "timeout",
    durationMs: result.durationMs,
    scopeViolations: result.scopeViolations,
    output: result.output,
    outputTruncated: result.outputTruncated,
    transcript: result.transcript ?? null,
    commitSha: result.commitSha,
    imageDigest: result.imageDigest ?? null,
    sandboxDriver: result.sandboxDriver ?? null,
    environment: result.environment ?? null,
    startedAt: result.timing.spawnedAt ?? result.timing.pickedAt,
    timing: { ...timing, received: receivedAt },
  };
}

/**
 * The run's whole timeline: the worker's phases, then `result_applied` from where they end to
 * `appliedAt`, the transition's time (the run's `ended_at`), so the phases add up to the run's
 * duration.
 */
export function phaseTimeline(result: Pick<RunResult, "timing">, appliedAt: number): RunPhase[] {
  const worker = result.timing.timeline ?? [];
  const end = timelineEnd(worker) ?? result.timing.reportedAt;
  return [
    ...worker,
    {
      name: "result_applied",
      startedAt: end,
      durationMs: Math.max(0, Math.round((appliedAt - end) * 10) / 10),
    },
  ];
}
