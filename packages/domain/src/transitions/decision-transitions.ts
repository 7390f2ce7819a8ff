/**
 * Operator decisions (rules 7 and 12): releasing a resolver for an external action, answers,
 * resolving a decision card, cancel and stop. `awaiting_input` is left only through these.
 */
import { CUSTOM_OPTION_ID, STOP_OPTION_ID, SYSTEM_OPTIONS } from "../decision.ts";
import { DomainError } from "../domain-error.ts";
import { APPROVE_PLAN_OPTION_ID } from "../mission.ts";
import { TERMINAL_TASK_STATUSES } from "../task.ts";
import type { ApplyResult } from "./apply-result.ts";
import { cancelWithOriginal, refuseIfLanded, stopItem } from "./cancellation.ts";
import { CONFIGURATION_REASONS, pendingDecisionOf, releaseWithAnswer } from "./decision-cards.ts";
import type { Draft } from "./draft.ts";
import type { CommandOf } from "./handler.ts";
import { approvePlanByOperator, awaitsPlanApproval, rejectPlan } from "./plan-approval.ts";
import { awaitsRetarget, retargetOrphan } from "./pull-request-stacks.ts";

export function releaseExternal(draft: Draft, command: CommandOf<"release-external">): ApplyResult {
  const task = draft.task(command.taskId);
  if (task.kind !== "resolver" || task.status !== "awaiting_input") {
    throw new DomainError(
      "invalid_transition",
      `release-external applies to a resolver awaiting input; ${task.id} is a ${task.kind} task in ${task.status}.`,
      { kind: task.kind, status: task.status },
    );
  }
  const pending = pendingDecisionOf(draft, task.id);
  if (pending)
    draft.resolveCard(pending, "release_external", command.reason, command.by, draft.ctx.newRunId());
  releaseWithAnswer(draft, task, "External action released by operator", command.reason, command.by);
  draft.event("task.released", { taskId: task.id, id: null }, { reason: command.reason, by: command.by });
  return draft.result("applied");
}

export function answer(draft: Draft, command: CommandOf<"answer">): ApplyResult {
  const task = draft.task(command.taskId);
  if (TERMINAL_TASK_STATUSES.has(task.status)) {
    throw new DomainError(
      "invalid_transition",
      `Task ${task.id} is ${task.status}; answers are not accepted.`,
    );
  }
  if (command.text.trim() === "")
    throw new DomainError("note_required", "The answer text is empty; send the answer in `text`.");
  const pending = pendingDecisionOf(draft, task.id);
  if (pending) {
    const resolutionId = draft.ctx.newRunId();
    draft.resolveCard(pending, CUSTOM_OPTION_ID, command.text, command.by, resolutionId);
    draft.resolution = { decisionId: pending.id, resolutionId, optionId: CUSTOM_OPTION_ID };
  }
  // Free text on a plan waiting for approval is the operator's feedback to the planner.
  if (awaitsPlanApproval(task)) rejectPlan(draft, task, command.text, command.by);
  else if (pending && awaitsRetarget(task, pending))
    retargetOrphan(draft, task, pending.question, command.text, command.by);
  else releaseWithAnswer(draft, task, pending?.question ?? "Operator message", command.text, command.by);
  draft.event(
    "task.answered",
    { taskId: task.id, id: null },
    { by: command.by, decisionId: pending?.id ?? null },
  );
  return draft.result("applied");
}

export function resolveDecision(draft: Draft, command: CommandOf<"resolve-decision">): ApplyResult {
  const decision = draft.decisions.get(command.decisionId);
  if (!decision)
    throw new DomainError("not_found", `Decision ${command.decisionId} does not exist in this project.`);
  if (decision.status === "resolved") {
    const existing = {
      decisionId: decision.id,
      resolutionId: decision.resolutionId ?? "",
      optionId: decision.selectedOption ?? "",
    };
    if (decision.selectedOption === command.optionId) {
      draft.resolution = existing;
      return draft.alreadyApplied();
    }
    throw new DomainError(
      "stale",
      `Decision ${decision.id} was already resolved with option "${decision.selectedOption}".`,
      {
        application_status: "stale",
        resolution_id: decision.resolutionId,
        selected_option: decision.selectedOption,
        note: decision.note,
      },
    );
  }
  // `custom` (free text) and `stop` (rule 12) keep their fixed meaning on every card.
  const option =
    decision.options.find((o) => o.id === command.optionId) ??
    (command.optionId === CUSTOM_OPTION_ID || command.optionId === STOP_OPTION_ID
      ? SYSTEM_OPTIONS.find((o) => o.id === command.optionId)
      : undefined);
  if (!option) {
    const allowed = [...new Set([...decision.options.map((o) => o.id), CUSTOM_OPTION_ID, STOP_OPTION_ID])];
    throw new DomainError(
      "invalid_option",
      `Option "${command.optionId}" is not offered by ${decision.id}; choose one of: ${allowed.join(", ")}.`,
      {
        allowed,
      },
    );
  }
  const note = command.note?.trim() ?? "";
  if (option.requires_note && note === "") {
    throw new DomainError("note_required", `Option "${option.id}" requires a note; send it in \`note\`.`);
  }
  draft.resolveCard(decision, option.id, note || null, command.by, command.resolutionId);
  draft.resolution = { decisionId: decision.id, resolutionId: command.resolutionId, optionId: option.id };
  const task = draft.task(decision.itemId);
  const configuration =
    task.status === "awaiting_input" &&
    task.awaitingReason !== null &&
    CONFIGURATION_REASONS.has(task.awaitingReason);
  if (option.id === STOP_OPTION_ID) {
    stopItem(draft, task, command.by);
  } else if (awaitsPlanApproval(task)) {
    if (option.id === APPROVE_PLAN_OPTION_ID) approvePlanByOperator(draft, task, command.by, note || null);
    else rejectPlan(draft, task, note || option.label, command.by);
  } else if (awaitsRetarget(task, decision)) {
    // Rule 20: every answer but stop retargets the pull request whose stacked base was closed.
    retargetOrphan(
      draft,
      task,
      decision.question,
      note ? `${option.label}: ${note}` : option.label,
      command.by,
    );
  } else {
    releaseWithAnswer(
      draft,
      task,
      decision.question,
      note ? `${option.label}: ${note}` : option.label,
      command.by,
    );
    if (configuration) resumeAfterConfiguration(draft, command.by);
  }
  return draft.result("applied");
}

/**
 * Continuing a configuration card is the operator saying it is fixed: the project that paused
 * for it claims again (as `overseer start` would), unless another such card still waits.
 */
function resumeAfterConfiguration(draft: Draft, by: string): void {
  if (draft.project.status !== "paused") return;
  for (const t of draft.tasks.values()) {
    if (
      t.status === "awaiting_input" &&
      t.awaitingReason !== null &&
      CONFIGURATION_REASONS.has(t.awaitingReason)
    )
      return;
  }
  draft.setProjectStatus("active", null, by);
}

/** Operator cancel: the task and its open resolvers end; a blocked original waiting on it asks the operator. */
export function cancel(draft: Draft, command: CommandOf<"cancel">): ApplyResult {
  const task = draft.task(command.taskId);
  if (TERMINAL_TASK_STATUSES.has(task.status)) {
    throw new DomainError(
      "invalid_transition",
      `Task ${task.id} is already ${task.status}; nothing to cancel.`,
      {
        status: task.status,
      },
    );
  }
  refuseIfLanded(draft, task);
  cancelWithOriginal(draft, task, command.by, command.reason ?? "cancelled by operator");
  return draft.result("applied");
}

/** Rule 12 stop: cancel the item, keep its work, turn continuous off. */
export function stop(draft: Draft, command: CommandOf<"stop">): ApplyResult {
  stopItem(draft, draft.task(command.taskId), command.by);
  return draft.result("applied");
}
