/**
 * Missions (see mission.ts): `start-mission` and a planning run's `propose`. What happens to a
 * reviewed proposal is in plan-approval.ts; planning rounds in mission-rounds.ts.
 */
import { DomainError } from "../domain-error.ts";
import type { Proposal } from "../mission.ts";
import { TERMINAL_TASK_STATUSES } from "../task.ts";
import type { ApplyResult } from "./apply-result.ts";
import type { Draft } from "./draft.ts";
import { escalateTask } from "./escalation-transitions.ts";
import type { CommandOf } from "./handler.ts";
import { addPlanningRound } from "./mission-rounds.ts";
import { inReview, requireAction } from "./outcome-steps.ts";
import { planProblems } from "./plan-approval.ts";
import { requireStageName } from "./project-control-transitions.ts";
import { oneLine } from "./text-format.ts";

export function startMission(draft: Draft, command: CommandOf<"start-mission">): ApplyResult {
  requireStageName(command.stage);
  const objective = command.objective.trim();
  if (objective === "") {
    throw new DomainError("invalid_transition", "A mission needs an objective; pass the objective text.");
  }
  if (!Number.isInteger(command.maxRounds) || command.maxRounds < 1) {
    throw new DomainError(
      "invalid_transition",
      `A mission's round limit must be a whole number of at least 1, received ${command.maxRounds}.`,
    );
  }
  const planning = [...draft.tasks.values()].find(
    (t) => t.kind === "plan" && !TERMINAL_TASK_STATUSES.has(t.status),
  );
  if (planning) {
    throw new DomainError(
      "invalid_transition",
      `Planning task ${planning.id} is still ${planning.status}; let it finish or cancel it before starting another mission.`,
      { taskId: planning.id, status: planning.status },
    );
  }
  const from = draft.project.status;
  draft.project = {
    ...draft.project,
    status: "active",
    statusReason: null,
    continuous: true,
    // A mission runs every stage its plans create; its own stage goes to the planner.
    stage: null,
    sessionsLimit: command.sessionsLimit,
    sessionsUsed: 0,
    mission: {
      objective,
      stage: command.stage,
      round: 0,
      maxRounds: command.maxRounds,
      evidence: null,
      completedAt: null,
    },
  };
  if (from !== "active") {
    draft.event(
      "project.status_changed",
      { taskId: null, id: null },
      { status: "active", reason: `mission started by ${command.by}` },
    );
  }
  draft.event(
    "mission.started",
    { taskId: null, id: null },
    {
      objective,
      stage: command.stage,
      maxRounds: command.maxRounds,
      sessionsLimit: command.sessionsLimit,
      budgetUsd: command.budgetUsd ?? null,
      by: command.by,
    },
  );
  addPlanningRound(draft, null);
  return draft.result("applied");
}

export function propose(draft: Draft, command: CommandOf<"propose">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["in_progress"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  requireAction(run, ["execute"], "propose");
  if (task.kind !== "plan") {
    throw new DomainError(
      "invalid_transition",
      `Task ${task.id} is a ${task.kind} task; only a mission's planning task may propose a plan or completion (use submit).`,
      { kind: task.kind },
    );
  }
  const proposal = command.proposal;
  const problems =
    proposal.kind === "problems"
      ? [...proposal.problems]
      : proposal.kind === "plan"
        ? planProblems(draft, proposal.tasks)
        : proposal.evidence.trim() === ""
          ? ["The completion evidence is empty; say what shows the objective is met."]
          : [];
  if (problems.length > 0) {
    const failures = task.failures + 1;
    const reason = `Run ${run.agentId} proposed an invalid plan (${problems.length} problem${problems.length === 1 ? "" : "s"})`;
    draft.endRun(
      run,
      { status: "failed", failure: `${reason}: ${oneLine(problems.join("; "), 400)}` },
      command.usage,
    );
    draft.event("mission.plan_invalid", run, {
      problems,
      attempt: failures,
      maxAttempts: command.maxAttempts,
    });
    const feedback = [
      "Your previous plan was refused; nothing was imported. Fix every problem below and propose again:",
      ...problems.map((p) => `- ${p}`),
    ].join("\n");
    if (failures < command.maxAttempts) {
      draft.putTask({ ...task, status: "todo", feedback, failures, notBefore: null });
    } else {
      escalateTask(draft, { ...task, feedback, failures: 0, notBefore: null }, run, {
        reason: `${reason} ${failures} times in a row; the last problems:\n${problems.join("\n")}`,
      });
    }
    return draft.result("applied");
  }
  draft.endRun(run, { status: "finished", transition: "submit" }, command.usage);
  const kept = proposal as Proposal;
  draft.putTask({ ...inReview(task, run, command.branchHead), proposal: kept });
  draft.event("task.submitted", run, {
    message:
      kept.kind === "plan" ? `Plan of ${kept.tasks.length} task(s)` : "Objective met: completion evidence",
    summary: command.summary ?? null,
    commitSha: command.commitSha,
    branchHead: command.branchHead,
    proposal: kept.kind,
    ...(kept.kind === "plan" ? { taskIds: kept.tasks.map((t) => t.id) } : {}),
  });
  return draft.result("applied");
}
