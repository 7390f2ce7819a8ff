/**
 * Decision cards ("Needs you"): a task waits in `awaiting_input` with one pending card, and
 * leaves it only through an operator command, whose words the next prompt carries.
 */
import {
  type Decision,
  type DecisionEvidence,
  type DecisionOption,
  decisionIdFor,
  SYSTEM_OPTIONS,
} from "../decision.ts";
import type { AwaitingReason, Task } from "../task.ts";
import type { Draft } from "./draft.ts";

/** Cards `overseer start` answers: the operator fixed the configuration and started again. */
export const CONFIGURATION_REASONS: ReadonlySet<AwaitingReason> = new Set([
  "configuration_error",
  "harness_not_configured",
]);

export interface CardText {
  title: string;
  reason: string;
  question: string;
  options?: readonly DecisionOption[] | undefined;
  evidence?: readonly DecisionEvidence[] | undefined;
}

/** Puts a task in `awaiting_input` with a pending decision card (revision bumps on re-ask). */
export function awaitInput(
  draft: Draft,
  task: Task,
  returnTo: "todo" | "review",
  reason: AwaitingReason,
  card: CardText,
): void {
  draft.putTask({
    ...task,
    status: "awaiting_input",
    awaitingReason: reason,
    statusReason: card.reason,
    returnTo,
  });
  draft.event("task.awaiting_input", { taskId: task.id, id: null }, { reason, message: card.reason });
  const id = decisionIdFor(task.id);
  const previous = draft.decisions.get(id);
  const decision: Decision = {
    id,
    projectId: task.projectId,
    itemId: task.id,
    revision: (previous?.revision ?? 0) + 1,
    status: "pending",
    title: card.title,
    reason: card.reason,
    question: card.question,
    evidence: card.evidence ?? [],
    options: card.options ?? SYSTEM_OPTIONS,
    optionsSource: card.options ? "agent" : "none",
    selectedOption: null,
    note: null,
    resolutionId: null,
    resolvedBy: null,
    createdAt: draft.ctx.now,
    resolvedAt: null,
  };
  draft.putDecision(decision, previous === undefined);
  draft.event(
    "decision.created",
    { taskId: task.id, id: null },
    { decisionId: id, revision: decision.revision },
  );
}

/** Leaves awaiting_input (operator action only) and records the operator's words for the next prompt. */
export function releaseWithAnswer(
  draft: Draft,
  task: Task,
  question: string,
  answerText: string,
  by: string,
): void {
  const answers = [...task.answers, { question, answer: answerText, by, at: draft.ctx.now }];
  if (task.status === "awaiting_input") {
    draft.putTask({
      ...task,
      status: task.returnTo ?? "todo",
      awaitingReason: null,
      statusReason: null,
      returnTo: null,
      answers,
      failures: 0,
      notBefore: null,
    });
  } else {
    draft.putTask({ ...task, answers });
  }
}

export function pendingDecisionOf(draft: Draft, taskId: string): Decision | undefined {
  const d = draft.decisions.get(decisionIdFor(taskId));
  return d?.status === "pending" ? d : undefined;
}
