import {
  type Command,
  DEFAULT_PLAN_APPROVAL,
  type PlanApproval,
  type PrerequisiteMode,
  type RetryPolicy,
} from "@overseer/domain";
import type { RunResult } from "@overseer/run-contract";
import { DEFAULT_MAX_IMPORT_TASKS, parseTaskFile } from "@overseer/task-files";

/**
 * Turns what a worker observed into the one command that records it. A scope violation
 * takes precedence over the agent's own transition (docs/state-machine.md rule 10: the work is kept, the
 * project pauses, a remediation waits for the operator). Every outcome carries the retry policy:
 * one the state machine refuses is then applied as a failed run in the same command.
 */
export function commandForResult(
  result: RunResult,
  retry: RetryPolicy,
  /** Task ids of the project: valid prerequisites of a planner's proposed graph. */
  existingTaskIds: Iterable<string> = [],
  /** The project's `plan_approval`, carried by approves (the domain reads it only for plans). */
  planApproval: PlanApproval = DEFAULT_PLAN_APPROVAL,
  /** The branch the work was to land on (domain `landingBranch`; named in a failed landing's feedback). */
  mainBranch = "main",
  /** Most tasks a planner's plan may hold: the import bound (OVERSEER_MAX_IMPORT_TASKS). */
  maxPlanTasks = DEFAULT_MAX_IMPORT_TASKS,
  /** `landing.pull_request.prerequisites`: stacked pull requests target an open prerequisite's. */
  prerequisites: PrerequisiteMode = "merged",
): Command {
  const runId = result.runId;
  const outcome = result.outcome;
  // Every outcome carries what the run spent; an older worker sent it with the transition only.
  const usage = result.usage ?? (outcome.kind === "transition" ? outcome.usage : undefined);
  if (result.scopeViolations.length > 0)
    return { kind: "scope-violation", runId, paths: result.scopeViolations, usage, retry };
  switch (outcome.kind) {
    case "timeout":
      return {
        kind: "timeout",
        runId,
        stalled: outcome.stalled,
        seconds: outcome.seconds,
        ...(outcome.idleSeconds !== undefined ? { idleSeconds: outcome.idleSeconds } : {}),
        checkpointRef: result.checkpointRef,
        usage,
        retry,
      };
    case "no-transition":
      return {
        kind: "no-transition",
        runId,
        detail: outcome.detail,
        crashed: outcome.crashed,
        ...(outcome.protocolNotFollowed ? { protocolNotFollowed: true } : {}),
        maxAttempts: retry.maxAttempts,
        backoffMs: retry.backoffMs,
        usage,
      };
    case "violation":
      return {
        kind: "run-violation",
        runId,
        violation: outcome.violation,
        detail: outcome.detail,
        checkpointRef: result.checkpointRef,
        usage,
        retry,
      };
    case "misconfigured":
      return {
        kind: "run-misconfigured",
        runId,
        reason: outcome.reason,
        message: outcome.message,
        usage,
        retry,
      };
    case "transition":
      return commandForTransition(result, outcome.transition, usage, {
        retry,
        existingTaskIds,
        planApproval,
        mainBranch,
        maxPlanTasks,
        prerequisites,
      });
  }
}

type Transition = Extract<RunResult["outcome"], { kind: "transition" }>["transition"];

/** The project's settings a transition's command carries. */
interface TransitionContext {
  retry: RetryPolicy;
  existingTaskIds: Iterable<string>;
  planApproval: PlanApproval;
  mainBranch: string;
  maxPlanTasks: number;
  prerequisites: PrerequisiteMode;
}

/** The command of the agent's own transition (no scope violation). */
function commandForTransition(
  result: RunResult,
  t: Transition,
  usage: RunResult["usage"],
  { retry, existingTaskIds, planApproval, mainBranch, maxPlanTasks, prerequisites }: TransitionContext,
): Command {
  const runId = result.runId;
  switch (t.kind) {
    case "submit":
      return {
        kind: "submit",
        runId,
        message: t.message,
        summary: t.summary,
        commitSha: result.commitSha,
        branchHead: result.branchHead,
        usage,
        retry,
      };
    case "approve":
      if (result.landingFailure) {
        return {
          kind: "land-failed",
          runId,
          reason: result.landingFailure.reason,
          files: result.landingFailure.files,
          details: result.landingFailure.details,
          branch: mainBranch,
          reviewerFeedback: t.feedback,
          maxAttempts: retry.maxAttempts,
          usage,
          retry,
        };
      }
      return {
        kind: "approve",
        runId,
        feedback: t.feedback,
        landedSha: result.landedSha,
        landedBranch: result.landedBranch,
        reviewedHead: result.branchHead,
        planApproval,
        // pull_request mode: the reviewed head is on the PR branch; the task waits on its pull request.
        ...(result.pullRequestHead
          ? {
              pullRequest: {
                base: mainBranch,
                prerequisites,
                headSha: result.pullRequestHead.sha,
              },
            }
          : {}),
        usage,
        retry,
      };
    case "reject":
      return { kind: "reject", runId, feedback: t.feedback, usage, retry };
    case "escalate":
      return {
        kind: "escalate",
        runId,
        reason: t.reason,
        needsUser: t.needs_user,
        category: t.category,
        question: t.question,
        options: t.options,
        checkpointRef: result.checkpointRef,
        replan: t.replan,
        usage,
        retry,
      };
    case "plan": {
      // The same validator as `overseer task import`: every problem at once, or the graph.
      const parsed = parseTaskFile(t.plan, "yaml", "plan", {
        existingIds: existingTaskIds,
        allowEmpty: false,
        maxTasks: maxPlanTasks,
      });
      return {
        kind: "propose",
        runId,
        proposal: parsed.ok
          ? { kind: "plan", tasks: parsed.tasks }
          : { kind: "problems", problems: parsed.problems.map((p) => p.message) },
        summary: t.summary,
        commitSha: result.commitSha,
        branchHead: result.branchHead,
        maxAttempts: retry.maxAttempts,
        usage,
        retry,
      };
    }
    case "complete":
      return {
        kind: "propose",
        runId,
        proposal: { kind: "complete", evidence: t.evidence },
        commitSha: result.commitSha,
        branchHead: result.branchHead,
        maxAttempts: retry.maxAttempts,
        usage,
        retry,
      };
  }
}
