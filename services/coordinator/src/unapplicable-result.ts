import type { Command } from "@overseer/domain";
import type { RunResult } from "@overseer/run-contract";
import { sanitizeText } from "@overseer/task-files";

/**
 * The command that ends a run whose result Postgres keeps refusing (a poison result): the
 * run fails with a `result_unapplicable` incident and its task follows the project's retry
 * policy like any run that ended without a transition, so the project carries on instead of
 * waiting on a run that stays `running`. Nothing of the refused result is stored but the
 * reason.
 */
export function unapplicableResultCommand(
  result: RunResult,
  error: unknown,
  attempts: number,
  retry: { maxAttempts: number; backoffMs: number },
): Command {
  const why = sanitizeText(error instanceof Error ? error.message : String(error)).slice(0, 500);
  return {
    kind: "no-transition",
    runId: result.runId,
    detail: `its result (${result.outcome.kind}) could not be applied after ${attempts} attempts: ${why}`,
    crashed: false,
    incident: "result_unapplicable",
    maxAttempts: retry.maxAttempts,
    backoffMs: retry.backoffMs,
  };
}
