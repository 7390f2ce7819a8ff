/**
 * A mission's proposal after review: a plan is imported whole or refused whole, completion
 * evidence completes the mission; with `plan_approval: operator` the reviewed plan waits on a
 * decision card that the operator approves or rejects with feedback.
 */
import { type DecisionOption, STOP_OPTION_ID, SYSTEM_OPTIONS } from "../decision.ts";
import { DomainError } from "../domain-error.ts";
import {
  APPROVE_PLAN_OPTION_ID,
  type PlanApproval,
  type PlanCard,
  REJECT_PLAN_OPTION_ID,
} from "../mission.ts";
import type { Run } from "../run.ts";
import { type Task, TERMINAL_TASK_STATUSES, taskFromCard } from "../task.ts";
import type { ApplyResult } from "./apply-result.ts";
import { awaitInput } from "./decision-cards.ts";
import type { Draft } from "./draft.ts";
import { markApproved } from "./outcome-steps.ts";
import { oneLine } from "./text-format.ts";

/** What keeps a plan from being imported as one whole into the current project. */
export function planProblems(draft: Draft, cards: readonly PlanCard[]): string[] {
  const problems: string[] = [];
  if (cards.length === 0) {
    problems.push(
      "The plan has no task; propose at least one, or declare the objective met with `overseer-agent complete`.",
    );
  }
  const incoming = new Set<string>();
  for (const card of cards) {
    if (draft.tasks.has(card.id))
      problems.push(`Task id ${card.id} is already taken in this project; choose a new id.`);
    else if (incoming.has(card.id)) problems.push(`Task id ${card.id} appears twice in the plan.`);
    incoming.add(card.id);
  }
  for (const card of cards) {
    const unknown = card.prerequisites.filter((p) => !draft.tasks.has(p) && !incoming.has(p));
    if (unknown.length > 0)
      problems.push(`Task ${card.id} names prerequisites that do not exist: ${unknown.join(", ")}.`);
  }
  return problems;
}

export function approveProposal(
  draft: Draft,
  task: Task,
  run: Run,
  feedback: string | undefined,
  planApproval: PlanApproval,
): ApplyResult {
  const proposal = task.proposal;
  if (proposal === null) {
    throw new DomainError("invalid_transition", `Planning task ${task.id} has no proposal to approve.`);
  }
  if (proposal.kind === "plan") {
    const problems = planProblems(draft, proposal.tasks);
    if (problems.length > 0) {
      refuseProposal(
        draft,
        task,
        run,
        "mission.plan_refused",
        "The reviewer approved, but the plan could not be imported yet:",
        problems,
      );
      return draft.result("applied");
    }
    if (planApproval === "operator") {
      awaitPlanApproval(draft, task, proposal.tasks, run, feedback);
      return draft.result("applied");
    }
    importPlan(
      draft,
      task,
      proposal.tasks,
      { taskId: task.id, id: run.id },
      {
        feedback: feedback ?? null,
        landedSha: null,
        landedBranch: null,
        executorAgentId: task.executorAgentId,
      },
    );
    return draft.result("applied");
  }
  // Completion: an independent reviewer approved; nothing may still be waiting or open.
  const reasons: string[] = [];
  for (const d of draft.decisions.values()) {
    if (d.status === "pending") reasons.push(`decision ${d.id} (${d.title}) is still pending`);
  }
  for (const t of draft.tasks.values()) {
    if (t.id !== task.id && !TERMINAL_TASK_STATUSES.has(t.status))
      reasons.push(`task ${t.id} is still ${t.status}`);
  }
  if (reasons.length > 0) {
    refuseProposal(
      draft,
      task,
      run,
      "mission.completion_refused",
      "The reviewer approved, but the objective cannot be declared met yet:",
      reasons,
    );
    return draft.result("applied");
  }
  markApproved(draft, task, run, { feedback: feedback ?? null, landedSha: null, landedBranch: null });
  const mission = draft.project.mission;
  if (mission) {
    draft.project = {
      ...draft.project,
      continuous: false,
      mission: { ...mission, evidence: proposal.evidence, completedAt: draft.ctx.now },
    };
  }
  draft.setProjectStatus("completed", "mission objective met; evidence approved by an independent reviewer");
  draft.event(
    "mission.completed",
    { taskId: task.id, id: run.id },
    { evidence: proposal.evidence, reviewer: run.agentId },
  );
  return draft.result("applied");
}

/** The planning task goes back to the planner with the reasons; its proposal is dropped. */
function refuseProposal(
  draft: Draft,
  task: Task,
  run: Run | null,
  event: "mission.plan_refused" | "mission.completion_refused",
  intro: string,
  reasons: readonly string[],
): void {
  replanWithFeedback(draft, task, [intro, ...reasons.map((r) => `- ${r}`)].join("\n"));
  draft.event(event, { taskId: task.id, id: run?.id ?? null }, { reasons });
}

/** Every proposed card becomes a todo task and the planning task is done, in one change. */
function importPlan(
  draft: Draft,
  task: Task,
  cards: readonly PlanCard[],
  subject: { taskId: string; id: string | null },
  approval: Record<string, unknown>,
): void {
  for (const card of cards) draft.addTask(taskFromCard(draft.project.id, card));
  draft.putTask({
    ...draft.task(task.id),
    status: "done",
    failures: 0,
    notBefore: null,
    statusReason: null,
    awaitingReason: null,
    returnTo: null,
  });
  draft.event("task.approved", subject, approval);
  draft.event("mission.planned", subject, { taskIds: cards.map((t) => t.id) });
}

export function awaitsPlanApproval(task: Task): boolean {
  return task.kind === "plan" && task.status === "awaiting_input" && task.awaitingReason === "plan_approval";
}

/** `plan_approval: operator`: the reviewed plan becomes a decision card with the proposed graph. */
function awaitPlanApproval(
  draft: Draft,
  task: Task,
  cards: readonly PlanCard[],
  run: Run,
  feedback: string | undefined,
): void {
  const round = draft.project.mission?.round ?? 0;
  awaitInput(draft, task, "todo", "plan_approval", {
    title: `Approve the plan of mission round ${round}`,
    reason: `Reviewer ${run.agentId} approved a plan of ${cards.length} task(s)${feedback ? ` (${oneLine(feedback, 200)})` : ""}; plan_approval is operator, so nothing is imported before you approve.`,
    question: `Import these ${cards.length} task(s) as one whole, or send the plan back to the planner with your feedback?`,
    options: [
      {
        id: APPROVE_PLAN_OPTION_ID,
        label: "Approve the plan",
        description: "Import every proposed task at once; the mission carries on with them.",
        requires_note: false,
      },
      {
        id: REJECT_PLAN_OPTION_ID,
        label: "Reject with feedback",
        description: "Nothing is imported; a new planning run gets your note.",
        requires_note: true,
      },
      SYSTEM_OPTIONS.find((o) => o.id === STOP_OPTION_ID) as DecisionOption,
    ],
    evidence: cards.map((c) => ({
      label: `${c.id}: ${oneLine(c.title, 120)}`,
      path: c.scope.join(", "),
      summary: oneLine(
        [
          `stage ${c.stage}, role ${c.role}`,
          c.prerequisites.length > 0 ? `after ${c.prerequisites.join(", ")}` : "no prerequisites",
          c.body,
        ]
          .filter((part) => part.trim() !== "")
          .join("; "),
        400,
      ),
    })),
  });
  draft.event(
    "mission.plan_awaiting_approval",
    { taskId: task.id, id: run.id },
    {
      taskIds: cards.map((c) => c.id),
      reviewer: run.agentId,
    },
  );
}

/** The operator approved the plan card: the graph is imported whole, or refused whole. */
export function approvePlanByOperator(draft: Draft, task: Task, by: string, note: string | null): void {
  const proposal = task.proposal;
  if (proposal?.kind !== "plan") {
    throw new DomainError("invalid_transition", `Planning task ${task.id} has no plan to approve.`);
  }
  const problems = planProblems(draft, proposal.tasks);
  if (problems.length > 0) {
    refuseProposal(
      draft,
      task,
      null,
      "mission.plan_refused",
      `${by} approved, but the plan could not be imported:`,
      problems,
    );
    return;
  }
  importPlan(
    draft,
    task,
    proposal.tasks,
    { taskId: task.id, id: null },
    {
      feedback: note,
      landedSha: null,
      landedBranch: null,
      executorAgentId: task.executorAgentId,
      approvedBy: by,
    },
  );
}

/** A planning task goes back to `todo` with no proposal and a fresh count; its next run reads `feedback`. */
function replanWithFeedback(draft: Draft, task: Task, feedback: string): void {
  draft.putTask({
    ...draft.task(task.id),
    status: "todo",
    proposal: null,
    failures: 0,
    notBefore: null,
    awaitingReason: null,
    returnTo: null,
    statusReason: null,
    feedback,
  });
}

/** The operator rejected the plan: nothing imported, a new planning run gets the feedback. */
export function rejectPlan(draft: Draft, task: Task, feedback: string, by: string): void {
  replanWithFeedback(
    draft,
    task,
    `The operator (${by}) rejected your plan; nothing was imported. Their feedback:\n${feedback}`,
  );
  draft.event("mission.plan_rejected", { taskId: task.id, id: null }, { by, feedback });
}
