import type { AppliedTransition } from "@overseer/db";
import type { RunPhase, RunResult } from "@overseer/run-contract";
import type { AppliedRun } from "@overseer/telemetry";

/**
 * What the run's root span says about a result just applied (packages/telemetry), or null when
 * it has no trace (the job carried no `traceparent`) or this application changed nothing (a
 * result delivered twice is traced once).
 */
export function appliedRunOf(
  result: RunResult,
  applied: AppliedTransition | null,
  phases: readonly RunPhase[],
): AppliedRun | null {
  if (result.traceparent === undefined || applied === null || applied.outcome !== "applied") return null;
  const run = applied.changes.runs.find((r) => r.id === result.runId);
  if (run === undefined) return null;
  const outcome = result.outcome.kind === "transition" ? result.outcome.transition.kind : result.outcome.kind;
  return {
    traceparent: result.traceparent,
    runId: run.id,
    taskId: run.taskId,
    projectId: result.projectId,
    action: run.action,
    agentId: run.agentId,
    outcome,
    failed: run.status === "failed",
    phases,
  };
}
