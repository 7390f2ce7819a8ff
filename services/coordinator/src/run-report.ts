import type { ApplyOptions } from "@overseer/db";
import type { RunResult } from "@overseer/run-contract";

/** What the runs row keeps of a worker's result, whatever command the result becomes. */
export function runReportOf(result: RunResult, receivedAt: number): NonNullable<ApplyOptions["runReport"]> {
  return {
    workerId: result.workerId,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.outcome.kind === "timeout",
    durationMs: result.durationMs,
    scopeViolations: result.scopeViolations,
    output: result.output,
    outputTruncated: result.outputTruncated,
    commitSha: result.commitSha,
    startedAt: result.timing.spawnedAt ?? result.timing.pickedAt,
    timing: { ...result.timing, received: receivedAt },
  };
}
