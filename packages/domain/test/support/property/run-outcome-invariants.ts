/**
 * Invariants of run outcomes: (a) done only through approve (push mode) by a review run whose
 * agent is not the task's executor, or through the merge of its pull request (rule 18); (m) a failed landing returns its task to todo with the landing recorded,
 * or to awaiting_input at the `attempts`-th failure in a row, and a task in review or done never
 * carries one.
 */
import type { Task } from "../../../src/index.ts";
import { byOperatorPlanApproval, ensure, type Step } from "./invariant-support.ts";

/** (a) and (m) for one task after the step. */
export function checkRunOutcomeTask(step: Step, after: Task, before: Task | undefined): void {
  const { prev, command, result, history, via } = step;
  // (a) done only by a fresh reviewer's approve.
  if (after.status === "done" && before?.status !== "done" && byOperatorPlanApproval(prev, command)) {
    // (k) the operator's approve_plan of a plan a fresh reviewer approved before.
    ensure(
      before?.kind === "plan" &&
        before.status === "awaiting_input" &&
        before.awaitingReason === "plan_approval",
      via(`${after.id} done by an operator's approve_plan without a waiting plan`),
    );
  } else if (after.status === "done" && before?.status !== "done" && command.kind === "pr-merged") {
    // Rule 18: its pull request (opened after a fresh reviewer's approve, (n)) merged.
    ensure(
      command.taskId === after.id && before?.pullRequest != null && before.pullRequest.status !== "merged",
      via(`${after.id} done by a merge of another pull request`),
    );
  } else if (after.status === "done" && before?.status !== "done") {
    const run = command.kind === "approve" ? prev.runs.get(command.runId) : undefined;
    ensure(run !== undefined, via(`${after.id} became done without an approve`));
    ensure(
      command.kind === "approve" && (command.pullRequest === undefined || before?.kind === "plan"),
      via(`${after.id} became done by an approve in pull_request mode`),
    );
    ensure(run?.action === "review" && run.taskId === after.id, via(`${after.id} done by a non-review run`));
    ensure(
      before?.executorAgentId != null && run?.agentId !== before.executorAgentId,
      via(`${after.id} approved by its executor ${before?.executorAgentId}`),
    );
    ensure(
      result.events.some((e) => e.type === "task.approved" && e.taskId === after.id),
      via(`${after.id} done without a task.approved event`),
    );
    history.stats.done++;
  }
  // (m) failed landings: back to todo with the landing recorded; never in review or done.
  if (
    command.kind === "land-failed" &&
    result.outcome === "applied" &&
    prev.runs.get(command.runId)?.taskId === after.id
  ) {
    const run = prev.runs.get(command.runId);
    ensure(
      run?.action === "review" && before?.status === "review" && run.agentId !== before.executorAgentId,
      via(`${after.id} land-failed from ${before?.status} by a ${run?.action} run`),
    );
    ensure(
      after.landing?.reason === command.reason &&
        ((before?.landingFailures ?? 0) + 1 < command.maxAttempts
          ? after.status === "todo" && after.landingFailures === (before?.landingFailures ?? 0) + 1
          : after.status === "awaiting_input" && after.landingFailures === 0),
      via(
        `${after.id} land-failed (${before?.landingFailures} before, max ${command.maxAttempts}) left it ${after.status} with landing ${JSON.stringify(after.landing)}`,
      ),
    );
    ensure(
      result.events.some((e) => e.type === "task.landing_failed" && e.taskId === after.id),
      via(`${after.id} land-failed without a task.landing_failed event`),
    );
    history.stats.landingFailed++;
    if (after.status === "awaiting_input") history.stats.landingLimit++;
  }
  if (after.status === "review" || after.status === "done") {
    ensure(after.landing === null, via(`${after.id} is ${after.status} with a landing failure recorded`));
  }
}
