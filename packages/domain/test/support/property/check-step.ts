/**
 * The invariants checked after every applied step of the property test, family by family
 * (one module each, as the handlers in src/transitions/).
 */
import type { ApplyResult, Command, ProjectState, Task } from "../../../src/index.ts";
import { checkActiveRuns, checkAgentIds } from "./claim-invariants.ts";
import { checkAwaitingLeft, checkPendingCard } from "./decision-invariants.ts";
import { checkBlockedBy, checkBlockedLeft, checkCreatedResolver } from "./escalation-invariants.ts";
import { byOperatorPlanApproval, ensure, type History, type Step } from "./invariant-support.ts";
import { checkCreatedPlanningTask, checkMission } from "./mission-invariants.ts";
import {
  checkImportedTask,
  checkProjectCommand,
  checkSessionsExhausted,
  checkTerminalStays,
} from "./project-control-invariants.ts";
import {
  checkClaimedPrerequisites,
  checkOrphans,
  checkPullRequestTask,
  checkStaleReport,
} from "./pull-request-invariants.ts";
import { checkRunOutcomeTask } from "./run-outcome-invariants.ts";

export function checkStep(prev: ProjectState, command: Command, result: ApplyResult, history: History): void {
  const next = result.state;
  const via = (what: string) => () => `${what} (after ${JSON.stringify(command)})`;
  const step: Step = { prev, command, result, next, history, via };
  checkProjectCommand(step);
  for (const after of next.tasks.values()) {
    const before = prev.tasks.get(after.id);
    checkRunOutcomeTask(step, after, before);
    checkPullRequestTask(step, after, before);
    checkTerminalStays(step, after, before);
    checkBlockedLeft(step, after, before);
    checkAwaitingLeft(step, after, before);
    if (result.changes.createdTaskIds.has(after.id)) checkCreatedTask(step, after);
  }
  for (const id of prev.tasks.keys()) ensure(next.tasks.has(id), via(`task ${id} disappeared`));
  checkStaleReport(step);
  checkClaimedPrerequisites(step);
  checkOrphans(step);
  checkAgentIds(step);
  checkActiveRuns(step);
  // Liveness: nothing is left in a state no command can move it out of.
  for (const t of next.tasks.values()) {
    checkPendingCard(step, t);
    checkBlockedBy(step, t);
  }
  checkMission(step);
  checkSessionsExhausted(step);
}

/** A created task is a planning round, an imported card, or a resolver. */
function checkCreatedTask(step: Step, after: Task): void {
  const { prev, command } = step;
  if (after.kind === "plan") checkCreatedPlanningTask(step, after);
  else if (
    command.kind === "approve" ||
    command.kind === "import-tasks" ||
    byOperatorPlanApproval(prev, command)
  )
    checkImportedTask(step, after);
  else checkCreatedResolver(step, after);
}
