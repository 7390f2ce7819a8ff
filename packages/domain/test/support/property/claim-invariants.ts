/**
 * Invariants of claims: (d) agent ids are never reused and never a retired id; (f) at most
 * `concurrency` active runs; (g) an active run's task is in_progress (execute/resolve) or review
 * (review), one per task, and an in_progress task has an active run.
 */
import { AGENT_ID_PATTERN } from "../../../src/index.ts";
import { activeRuns } from "../state-builder.ts";
import { ensure, type Step, statusOf } from "./invariant-support.ts";

/** (d) fresh agent ids, never a retired one. */
export function checkAgentIds({ result, next, history, via }: Step): void {
  if (result.changes.createdRunIds.size > 0) {
    const retired = new Set([...next.tasks.values()].flatMap((t) => t.retiredAgentIds));
    for (const runId of result.changes.createdRunIds) {
      const run = next.runs.get(runId);
      ensure(run !== undefined, via(`created run ${runId} missing`));
      if (!run) continue;
      ensure(AGENT_ID_PATTERN.test(run.agentId), via(`malformed agent id ${run.agentId}`));
      ensure(!history.agentIds.has(run.agentId), via(`agent id ${run.agentId} reused`));
      ensure(!retired.has(run.agentId), via(`retired agent id ${run.agentId} minted`));
      history.agentIds.add(run.agentId);
    }
  }
}

/** (f) and (g). */
export function checkActiveRuns({ next, via }: Step): void {
  const active = activeRuns(next);
  ensure(
    active.length <= next.project.concurrency,
    via(`${active.length} active runs > ${next.project.concurrency}`),
  );
  const perTask = new Map<string, number>();
  for (const run of active) {
    perTask.set(run.taskId, (perTask.get(run.taskId) ?? 0) + 1);
    const status = statusOf(next, run.taskId);
    const expected = run.action === "review" ? "review" : "in_progress";
    ensure(status === expected, via(`active ${run.action} run ${run.id} on a ${status} task`));
  }
  for (const [taskId, n] of perTask) ensure(n === 1, via(`${n} active runs on ${taskId}`));
  for (const t of next.tasks.values()) {
    if (t.status === "in_progress")
      ensure(perTask.get(t.id) === 1, via(`${t.id} in_progress without an active run`));
  }
}
