/**
 * What every invariant check of the property test shares: one step (the state before, the
 * command, the result), the run's history and counters, and a cheap assertion.
 */
import {
  APPROVE_PLAN_OPTION_ID,
  type ApplyResult,
  type Command,
  type ProjectState,
  STOP_OPTION_ID,
  type Task,
} from "../../../src/index.ts";

export interface History {
  /** Every agent id ever minted in this sequence. */
  agentIds: Set<string>;
  stats: Stats;
}

export interface Stats {
  steps: number;
  done: number;
  blockerLimit: number;
  depthLimit: number;
  remediationLimit: number;
  nested: number;
  stale: number;
  exhausted: number;
  rounds: number;
  imported: number;
  completed: number;
  awaitingPlan: number;
  operatorImported: number;
  landingFailed: number;
  landingLimit: number;
  prOpened: number;
  prMerged: number;
  prCiLimit: number;
  prReviewWork: number;
  prStale: number;
  prOrphaned: number;
}

/** One applied step; `via` builds a failure message naming the command. */
export interface Step {
  prev: ProjectState;
  command: Command;
  result: ApplyResult;
  /** `result.state`. */
  next: ProjectState;
  history: History;
  via: (what: string) => () => string;
}

/** A resolve-decision choosing approve_plan on a card of a plan waiting for the operator. */
export function byOperatorPlanApproval(prev: ProjectState, command: Command): boolean {
  if (command.kind !== "resolve-decision" || command.optionId !== APPROVE_PLAN_OPTION_ID) return false;
  const decision = prev.decisions.get(command.decisionId);
  return (
    decision?.status === "pending" && prev.tasks.get(decision.itemId)?.awaitingReason === "plan_approval"
  );
}

export function statusOf(state: ProjectState, id: string | null): Task["status"] | undefined {
  return id === null ? undefined : state.tasks.get(id)?.status;
}

export function isStop(command: Command, result: ApplyResult): boolean {
  return (
    command.kind === "stop" ||
    (command.kind === "resolve-decision" && result.resolution?.optionId === STOP_OPTION_ID)
  );
}

/**
 * A plain assertion: this runs thousands of times per test, and `expect` costs far more.
 * The message is built only on failure; fast-check then reports the shrunk sequence.
 */
export function ensure(condition: boolean, message: () => string): void {
  if (!condition) throw new Error(message());
}

export function isTerminal(t: Task): boolean {
  return t.status === "done" || t.status === "cancelled";
}
