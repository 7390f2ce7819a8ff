/**
 * Run outcomes: what a worker reports about one run (rules 2, 3, 7–10). Each ends the run
 * (a redelivered outcome of an ended run is `already_applied`) and moves its task on.
 * Escalations are in escalation-transitions.ts, a planner's proposal in mission-transitions.ts.
 */
import type { Command } from "../command.ts";
import { DomainError, isDomainError } from "../domain-error.ts";
import type { Run } from "../run.ts";
import type { AwaitingReason, Task } from "../task.ts";
import type { ApplyResult } from "./apply-result.ts";
import { awaitInput } from "./decision-cards.ts";
import type { Draft } from "./draft.ts";
import { escalateTask } from "./escalation-transitions.ts";
import type { CommandOf } from "./handler.ts";
import { failLanding } from "./landing-failure.ts";
import { inReview, markApproved, requireAction, unblockOriginal } from "./outcome-steps.ts";
import { approveProposal } from "./plan-approval.ts";
import { requestPullRequest } from "./pull-request-steps.ts";

/** A worker picked the run up (or picked it up again after its first worker died). */
export function runStarted(draft: Draft, command: CommandOf<"run-started">): ApplyResult {
  const run = draft.activeRun(command.runId);
  const started = { workerId: command.workerId, startedAt: draft.ctx.now };
  if (run?.status === "queued") {
    draft.putRun({ ...run, status: "running", ...started });
    draft.event("run.started", run, { workerId: command.workerId });
    return draft.result("applied");
  }
  // A running run picked up by another worker, later than its current start: its first
  // worker died or froze past its job lock, so the run records its new worker.
  if (
    run?.status === "running" &&
    run.workerId !== command.workerId &&
    (run.startedAt === null || run.startedAt < draft.ctx.now)
  ) {
    draft.putRun({ ...run, ...started });
    draft.event("run.redelivered", run, { workerId: command.workerId, previousWorkerId: run.workerId });
    return draft.result("applied");
  }
  // Repeated (same worker), late (an older start) or the run already ended: nothing to apply.
  return draft.alreadyApplied();
}

export function submit(draft: Draft, command: CommandOf<"submit">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["in_progress"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  requireAction(run, ["execute", "resolve"], "submit");
  draft.endRun(run, { status: "finished", transition: "submit" }, command.usage);
  draft.putTask(inReview(task, run, command.branchHead));
  draft.event("task.submitted", run, {
    message: command.message,
    summary: command.summary ?? null,
    commitSha: command.commitSha,
    branchHead: command.branchHead,
  });
  return draft.result("applied");
}

export function approve(draft: Draft, command: CommandOf<"approve">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  requireAction(run, ["review"], "approve");
  if (run.agentId === task.executorAgentId) {
    throw new DomainError(
      "invalid_transition",
      `Reviewer ${run.agentId} is the executor of ${task.id}; a fresh reviewer must approve.`,
    );
  }
  if (command.reviewedHead !== undefined && command.reviewedHead !== task.branchHead) {
    throw new DomainError(
      "invalid_transition",
      `Reviewer ${run.agentId} approved ${command.reviewedHead ?? "no commit"}, but the head of ${task.id} is ${task.branchHead ?? "no commit"}; only the reviewed head may be approved.`,
      { reviewedHead: command.reviewedHead, branchHead: task.branchHead },
    );
  }
  draft.endRun(run, { status: "finished", transition: "approve" }, command.usage);
  if (task.kind === "plan") {
    return approveProposal(draft, task, run, command.feedback, command.planApproval ?? "reviewer");
  }
  if (command.pullRequest !== undefined) {
    // Rule 14: the reviewed head is on the PR branch; done only once the pull request merges.
    requestPullRequest(draft, task, run, command, command.pullRequest);
    return draft.result("applied");
  }
  markApproved(draft, task, run, {
    feedback: command.feedback ?? null,
    landedSha: command.landedSha,
    landedBranch: command.landedBranch,
  });
  unblockOriginal(draft, task, run.id, command.feedback ?? null);
  return draft.result("applied");
}

export function reject(draft: Draft, command: CommandOf<"reject">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  requireAction(run, ["review"], "reject");
  draft.endRun(run, { status: "finished", transition: "reject" }, command.usage);
  draft.putTask({ ...task, status: "todo", feedback: command.feedback, failures: 0, notBefore: null });
  draft.event("task.rejected", run, { feedback: command.feedback });
  return draft.result("applied");
}

export function landFailed(draft: Draft, command: CommandOf<"land-failed">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  requireAction(run, ["review"], "land-failed");
  if (run.agentId === task.executorAgentId) {
    throw new DomainError(
      "invalid_transition",
      `Reviewer ${run.agentId} is the executor of ${task.id}; a fresh reviewer must approve.`,
    );
  }
  draft.endRun(run, { status: "finished", transition: "approve" }, command.usage);
  failLanding(draft, task, run, command, { executorAgentId: task.executorAgentId });
  return draft.result("applied");
}

/** Rule 8: hard timeout or idle stall; the process group was killed and a resolver takes over. */
export function timeout(draft: Draft, command: CommandOf<"timeout">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["in_progress", "review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  const what = command.stalled
    ? `stalled (no output and no file change for ${command.idleSeconds ?? command.seconds} s${command.idleSeconds !== undefined ? `, after ${command.seconds} s of run` : ""})`
    : `timed out after ${command.seconds} s`;
  const reason = `Run ${run.agentId} ${what}; its process group was killed.`;
  draft.endRun(run, { status: "failed", failure: reason }, command.usage);
  draft.incident(command.stalled ? "stall" : "timeout", task, run, reason, {
    seconds: command.seconds,
    ...(command.idleSeconds !== undefined ? { idleSeconds: command.idleSeconds } : {}),
    checkpointRef: command.checkpointRef ?? null,
  });
  escalateTask(draft, task, run, { reason });
  return draft.result("applied");
}

export function noTransition(draft: Draft, command: CommandOf<"no-transition">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["in_progress", "review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  const failures = task.failures + 1;
  const reason = `Run ${run.agentId} ${command.crashed ? "crashed" : "ended without a transition"}: ${command.detail}`;
  draft.endRun(run, { status: "failed", failure: reason }, command.usage);
  if (command.crashed) draft.incident("harness_crash", task, run, reason, {});
  else if (command.incident) draft.incident(command.incident, task, run, reason, {});
  if (failures < command.maxAttempts) {
    const delay = command.backoffMs * 2 ** (failures - 1);
    const notBefore = draft.ctx.now + delay;
    // The next run is told why this one ended (the detail carries the run's last lines).
    const note = `The previous run (${run.agentId}) ${command.crashed ? "crashed" : "ended without a transition"}: ${command.detail}`;
    draft.putTask({
      ...task,
      status: run.action === "review" ? "review" : "todo",
      failures,
      notBefore,
      feedback: task.feedback ? `${task.feedback}\n\n${note}` : note,
    });
    draft.event("task.retry_scheduled", run, {
      attempt: failures + 1,
      maxAttempts: command.maxAttempts,
      delayMs: delay,
      reason,
    });
  } else if (command.protocolNotFollowed) {
    // A resolver's runs would end the same way: one incident, the project paused.
    pauseForConfiguration(draft, { ...task, failures: 0, notBefore: null }, run, {
      incident: "protocol_not_followed",
      reason: "configuration_error",
      title: "The agent does not follow the protocol",
      message: `The agent does not follow the protocol: ${failures} runs of ${task.id} in a row ended without calling overseer-agent (the last: ${run.agentId}, ${command.detail}). Fix: use a model that runs shell commands and follows the prompt's overseer-agent instructions (overseer init --project ${task.projectId} --update --agent NAME --model MODEL with the key in the environment and the --base-url, --agent-bin and --config you gave at first), or correct the runner config's prompt; then \`overseer start --project ${task.projectId}\` resumes the project and this task.`,
    });
  } else {
    escalateTask(draft, { ...task, failures: 0, notBefore: null }, run, {
      reason: `${reason} (attempt ${failures} of ${command.maxAttempts}; no retries left)`,
    });
  }
  return draft.result("applied");
}

/**
 * A worker's outcome the state machine refuses as an invalid transition (a transition its run
 * may not make, or one its task is no longer in a state for) is a failed run: the no-transition
 * command that applies it, under the project's retry policy, with the refusal as the detail and
 * the outcome's usage. Null when the command carries no policy (`retry`, only a worker's result
 * has one) or the error is another refusal: the caller then throws it.
 */
export function refusedOutcomeAsFailedRun(
  command: Command,
  error: unknown,
): CommandOf<"no-transition"> | null {
  if (!isDomainError(error) || error.code !== "invalid_transition") return null;
  if (!("retry" in command) || command.retry === undefined) return null;
  return {
    kind: "no-transition",
    runId: command.runId,
    detail: `invalid transition: ${error.message}`,
    crashed: false,
    maxAttempts: command.retry.maxAttempts,
    backoffMs: command.retry.backoffMs,
    usage: command.usage,
  };
}

/** The run could not start for a reason only an operator can fix (rule 7). */
export function runMisconfigured(draft: Draft, command: CommandOf<"run-misconfigured">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["in_progress", "review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  draft.endRun(run, { status: "failed", failure: command.message }, command.usage);
  pauseForConfiguration(draft, task, run, {
    incident: command.reason,
    reason: command.reason,
    title: command.reason === "harness_not_configured" ? "Harness not configured" : "Configuration error",
    message: command.message,
  });
  return draft.result("applied");
}

/** Rule 10: paths changed outside the task scope; the work is kept, the project pauses. */
export function scopeViolation(draft: Draft, command: CommandOf<"scope-violation">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["in_progress", "review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  const paths = [...command.paths].sort();
  const reason = `Run ${run.agentId} changed paths outside the scope of ${task.id}: ${paths.join(", ")}`;
  draft.endRun(run, { status: "failed", failure: reason }, command.usage);
  draft.incident("scope_violation", task, run, reason, { paths, scope: task.scope });
  escalateTask(draft, task, run, { reason, forceAwaiting: "scope_violation" });
  draft.setProjectStatus("paused", `scope violation in ${task.id}`);
  return draft.result("applied");
}

/** The worker refused the run for breaking a run rule: an incident, and the task escalates. */
export function runViolation(draft: Draft, command: CommandOf<"run-violation">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["in_progress", "review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  const reason = `Run ${run.agentId} was refused by its worker (${command.violation}): ${command.detail}`;
  draft.endRun(run, { status: "failed", failure: reason }, command.usage);
  draft.incident(command.violation, task, run, reason, {
    action: run.action,
    checkpointRef: command.checkpointRef ?? null,
  });
  escalateTask(draft, task, run, { reason });
  return draft.result("applied");
}

interface ConfigurationPause {
  incident: "harness_not_configured" | "configuration_error" | "protocol_not_followed";
  reason: Extract<AwaitingReason, "harness_not_configured" | "configuration_error">;
  title: string;
  /** Cause and fix, then what the run said. */
  message: string;
}

/**
 * Rule 7: a cause no retry can fix (the same config fails every task the same way). ONE
 * incident, the task waits with a card naming cause and fix, and the project stops claiming.
 * `overseer start` after the fix releases the card and resumes (see startProject): one step.
 */
function pauseForConfiguration(draft: Draft, task: Task, run: Run, pause: ConfigurationPause): void {
  draft.incident(pause.incident, task, run, pause.message, {});
  awaitInput(draft, task, run.action === "review" ? "review" : "todo", pause.reason, {
    title: pause.title,
    reason: pause.message,
    question: `${pause.message}\nFix the configuration, then run \`overseer start --project ${task.projectId}\` (or choose Continue here): either one releases this task and resumes the project.`,
  });
  if (draft.project.status === "active") {
    const first = pause.message.split("\n")[0] ?? "";
    draft.setProjectStatus(
      "paused",
      `${pause.incident} in ${task.id}: ${first.length > 300 ? `${first.slice(0, 299)}…` : first}`,
    );
  }
}
