/**
 * Invariants of missions (k): an approved plan is imported whole (every proposed card) or not at
 * all; planning rounds are created only by start-mission, a continuous claim with every task
 * finished, or a replan, and never past the round limit; a project completes only through a
 * fresh reviewer's approve of completion evidence with no pending card and no open task; with
 * plan_approval operator a reviewer's approve imports nothing (the plan waits on a pending card)
 * and only the operator's approve_plan imports it, whole or not at all.
 */
import type { PlanCard, Task } from "../../../src/index.ts";
import { byOperatorPlanApproval, ensure, isTerminal, type Step, statusOf } from "./invariant-support.ts";

/**
 * (k) A plan is imported whole, its planning task then `done`, or not at all: `created` (sorted)
 * against the plan's ids. Answers whether it was imported; `importer` names the step in messages.
 */
function ensureWholeImport(
  plan: readonly PlanCard[],
  created: readonly string[],
  done: boolean,
  via: (what: string) => () => string,
  importer: string,
): boolean {
  const proposed = plan.map((c) => c.id).sort();
  const imported = created.join() === proposed.join();
  ensure(
    imported || created.length === 0,
    via(`plan imported partly: ${created.join()} of ${proposed.join()}`),
  );
  ensure(imported === done, via(`the planning task's end does not match ${importer}`));
  return imported;
}

/** A planning task the step created: only from a start, a continuous claim with all finished, or a replan. */
export function checkCreatedPlanningTask({ prev, command, history, via }: Step, after: Task): void {
  history.stats.rounds++;
  const byStart = command.kind === "start-mission";
  const byClaim =
    command.kind === "claim" &&
    prev.project.continuous &&
    prev.project.mission !== null &&
    prev.project.mission.evidence === null &&
    [...prev.tasks.values()].every(isTerminal);
  const byReplan = command.kind === "escalate" && command.replan === true && prev.project.mission !== null;
  ensure(byStart || byClaim || byReplan, via(`planning task ${after.id} created`));
  ensure(
    after.status === "todo" || after.status === "in_progress",
    via(`planning task ${after.id} is ${after.status}`),
  );
}

/** (k) plan approval, whole imports, completion and the round limit. */
export function checkMission(step: Step): void {
  checkPlanApproval(step);
  checkCompletion(step);
  const { next, via } = step;
  // (k) the round limit holds.
  const mission = next.project.mission;
  if (mission)
    ensure(mission.round <= mission.maxRounds, via(`round ${mission.round} > ${mission.maxRounds}`));
}

function checkPlanApproval({ prev, command, result, next, history, via }: Step): void {
  // (k) operator approval: a reviewer's approve of a plan imports nothing and leaves a card.
  if (command.kind === "approve" && command.planApproval === "operator" && result.outcome === "applied") {
    const run = prev.runs.get(command.runId);
    const planning = run ? prev.tasks.get(run.taskId) : undefined;
    if (planning?.kind === "plan" && planning.proposal?.kind === "plan") {
      const after = next.tasks.get(planning.id);
      ensure(result.changes.createdTaskIds.size === 0, via("a plan was imported without the operator"));
      ensure(
        (after?.status === "awaiting_input" &&
          after.awaitingReason === "plan_approval" &&
          next.decisions.get(`decision-${planning.id}`)?.status === "pending") ||
          after?.status === "todo",
        via(`plan ${planning.id} is ${after?.status} after the reviewer's approve`),
      );
      if (after?.status === "awaiting_input") history.stats.awaitingPlan++;
    }
  }
  // (k) the operator's approve_plan imports the waiting plan whole, or nothing.
  if (byOperatorPlanApproval(prev, command) && result.outcome === "applied") {
    const decision = command.kind === "resolve-decision" ? prev.decisions.get(command.decisionId) : undefined;
    const planning = decision ? prev.tasks.get(decision.itemId) : undefined;
    const proposal = planning?.proposal;
    const created = [...result.changes.createdTaskIds].sort();
    if (planning?.awaitingReason === "plan_approval" && proposal?.kind === "plan") {
      const done = statusOf(next, planning.id) === "done";
      if (ensureWholeImport(proposal.tasks, created, done, via, "the operator's import")) {
        history.stats.operatorImported++;
      }
    } else {
      ensure(created.length === 0, via("an approve_plan without a waiting plan created tasks"));
    }
  } else if (command.kind === "resolve-decision" || command.kind === "answer") {
    ensure(result.changes.createdTaskIds.size === 0, via("an operator answer created tasks"));
  }
  // (k) a plan is imported whole or not at all.
  if (command.kind === "approve") {
    const run = prev.runs.get(command.runId);
    const planning = run ? prev.tasks.get(run.taskId) : undefined;
    const proposal = planning?.kind === "plan" ? planning.proposal : null;
    const created = [...result.changes.createdTaskIds].sort();
    if (proposal?.kind === "plan" && result.outcome === "applied") {
      const done = statusOf(next, planning?.id ?? null) === "done";
      if (ensureWholeImport(proposal.tasks, created, done, via, "the import")) history.stats.imported++;
    } else {
      ensure(created.length === 0, via("an approve that was not a plan created tasks"));
    }
  }
}

function checkCompletion({ prev, command, next, history, via }: Step): void {
  // (k) completion only through a fresh reviewer's approve of evidence, with nothing left open.
  if (next.project.status === "completed" && prev.project.status !== "completed") {
    history.stats.completed++;
    const run = command.kind === "approve" ? prev.runs.get(command.runId) : undefined;
    const planning = run ? prev.tasks.get(run.taskId) : undefined;
    ensure(
      run?.action === "review" && planning?.kind === "plan" && planning.proposal?.kind === "complete",
      via("completed without an approved completion"),
    );
    ensure(run?.agentId !== planning?.executorAgentId, via("completion approved by its planner"));
    ensure(
      ![...prev.decisions.values()].some((d) => d.status === "pending"),
      via("completed with a pending card"),
    );
    ensure([...next.tasks.values()].every(isTerminal), via("completed with an open task"));
    ensure(
      next.project.mission?.evidence != null && !next.project.continuous,
      via("completion kept no evidence"),
    );
  }
}
