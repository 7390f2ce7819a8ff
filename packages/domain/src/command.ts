import type { MissionBound, PlanApproval, Proposal } from "./mission.ts";
import type { NewProject, ProjectSettingsPatch } from "./project-settings.ts";
import type {
  FailingCheck,
  PrerequisiteMode,
  PullRequestCheckState,
  PullRequestComment,
  PullRequestOnClosed,
  ReviewThread,
} from "./pull-request.ts";
import type { AwaitingReason, LandingFailureReason } from "./task.ts";
import type { TaskCardInput } from "./task-card.ts";

/**
 * Everything that can change a project's tasks. Worker outcomes carry the run id that
 * produced them: applying the same run's outcome twice is a no-op (at-least-once delivery).
 */
/**
 * What a run consumed, as its worker measured it. Every run outcome may carry it (a run that
 * failed or timed out has spent tokens too), and it is counted once per run.
 */
export interface Usage {
  tokensIn?: number | undefined;
  tokensOut?: number | undefined;
  /** Input tokens served from the provider's cache (part of tokensIn). */
  tokensCached?: number | undefined;
  costUsd?: number | undefined;
  /** Where it was read: `overseer-agent`, or the CLI's stream or session file. */
  source?: string | undefined;
}

/** The project's retry policy: runner config `attempts` and `retry_backoff_seconds`. */
export interface RetryPolicy {
  maxAttempts: number;
  backoffMs: number;
}

/**
 * What a worker's result adds to the outcome it reports. With `retry` (the coordinator sends the
 * project's policy), an outcome the state machine refuses as an invalid transition (an
 * executor's approve, a reviewer's submit, a planner's proposal from a work task) is applied in
 * the same command as the failed run it is: the no-transition branch under that policy, with the
 * refusal as the detail. Without it the refusal is thrown.
 */
export interface ResultOutcome {
  retry?: RetryPolicy | undefined;
}

export interface OptionCommandInput {
  id: string;
  label?: string | undefined;
  description?: string | undefined;
  requires_note?: boolean | undefined;
}

export type Command =
  /** Scheduler tick: claim runnable tasks up to the project's free slots (rule 1). */
  | {
      kind: "claim";
      stage?: string | null | undefined;
      /** `landing.pull_request.prerequisites` in pull_request mode; default `merged` (rule 19). */
      prerequisites?: PrerequisiteMode | undefined;
    }
  /** A worker picked the run up. */
  | { kind: "run-started"; runId: string; workerId: string }
  | ({
      kind: "submit";
      runId: string;
      message: string;
      summary?: string | undefined;
      commitSha: string | null;
      branchHead: string | null;
      usage?: Usage | undefined;
    } & ResultOutcome)
  | ({
      kind: "approve";
      runId: string;
      feedback?: string | undefined;
      landedSha: string | null;
      landedBranch: string | null;
      /**
       * The task branch head the reviewer reviewed and the worker landed. When given, it must be
       * the head Postgres recorded at the last submit, or the approve is refused.
       */
      reviewedHead?: string | null | undefined;
      /** The project's `plan_approval`; `operator` turns an approved plan into a decision card. Default reviewer. */
      planApproval?: PlanApproval | undefined;
      /**
       * `landing.mode: pull_request`: the approved head was pushed to the task's PR branch
       * instead of landing; the task becomes `pr_open` with a pull request into `base` (rule 14).
       */
      pullRequest?: PullRequestLanding | undefined;
      usage?: Usage | undefined;
    } & ResultOutcome)
  | ({ kind: "reject"; runId: string; feedback: string; usage?: Usage | undefined } & ResultOutcome)
  /**
   * A fresh reviewer approved, but the work did not land (rule 3): a real conflict with the
   * main branch, or the project's check command failed on the integrated tree. The task goes
   * back to `todo` for an executor whose checkout has the main branch merged in.
   */
  | ({
      kind: "land-failed";
      runId: string;
      reason: LandingFailureReason;
      /** The conflicting files (a conflict), sorted and deduplicated when applied. */
      files: readonly string[];
      /** Git's conflict messages, or the tail of the check command's output. */
      details: string;
      /** The main branch the work was to land on (named in the feedback). */
      branch: string;
      /** The reviewer's own approve feedback, if any. */
      reviewerFeedback?: string | undefined;
      /**
       * Failed landings in a row after which the task waits for an operator (reason `other`)
       * instead of going back to an executor: the project's `attempts`.
       */
      maxAttempts: number;
      usage?: Usage | undefined;
    } & ResultOutcome)
  | ({
      kind: "escalate";
      runId: string;
      reason: string;
      needsUser?: boolean | undefined;
      category?: AwaitingReason | undefined;
      question?: string | undefined;
      options?: readonly OptionCommandInput[] | undefined;
      checkpointRef?: string | null | undefined;
      /** Ask the mission for a new planning round instead of a resolver (`escalate --replan`). */
      replan?: boolean | undefined;
      usage?: Usage | undefined;
    } & ResultOutcome)
  /**
   * A planning run's outcome (`overseer-agent plan` / `complete`): a validated task graph or
   * completion evidence goes to review; `problems` (the graph failed validation) sends every
   * problem back to a new planning run, up to `maxAttempts` in a row.
   */
  | ({
      kind: "propose";
      runId: string;
      proposal: Proposal | { kind: "problems"; problems: readonly string[] };
      summary?: string | undefined;
      commitSha: string | null;
      branchHead: string | null;
      maxAttempts: number;
      usage?: Usage | undefined;
    } & ResultOutcome)
  /** Hard timeout or idle stall: the process group was killed (rule 8). */
  | ({
      kind: "timeout";
      runId: string;
      stalled: boolean;
      /** How long the run ran. */
      seconds: number;
      /** A stall: how long it had been idle when the watchdog ended it (`idle_timeout_seconds`). */
      idleSeconds?: number | undefined;
      checkpointRef?: string | null | undefined;
      usage?: Usage | undefined;
    } & ResultOutcome)
  /** The harness exited without a transition or crashed (rule 9). */
  | {
      kind: "no-transition";
      runId: string;
      detail: string;
      crashed: boolean;
      /** Recorded as an incident of this kind (a crash is always `harness_crash`). */
      incident?: "result_unapplicable" | undefined;
      /**
       * The agent ended by itself (exit 0) without calling overseer-agent: the model does not
       * follow the protocol. When no retry is left this pauses the project with one incident
       * instead of escalating to a resolver (whose runs would do the same).
       */
      protocolNotFollowed?: boolean | undefined;
      maxAttempts: number;
      backoffMs: number;
      usage?: Usage | undefined;
    }
  /** The run could not start for a reason only an operator can fix. */
  | ({
      kind: "run-misconfigured";
      runId: string;
      reason: Extract<AwaitingReason, "harness_not_configured" | "configuration_error">;
      message: string;
      usage?: Usage | undefined;
    } & ResultOutcome)
  /**
   * The worker stopped or refused the run for breaking a run rule: a transition its action may
   * not make (an executor's approve), or the per-run disk limit. Nothing landed; the work is
   * kept as a checkpoint.
   */
  | ({
      kind: "run-violation";
      runId: string;
      violation: RunViolationKind;
      detail: string;
      checkpointRef?: string | null | undefined;
      usage?: Usage | undefined;
    } & ResultOutcome)
  /** Changed paths outside the task scope (rule 10). The run's work is kept. */
  | ({
      kind: "scope-violation";
      runId: string;
      paths: readonly string[];
      usage?: Usage | undefined;
    } & ResultOutcome)
  | PullRequestCommand
  | { kind: "release-external"; taskId: string; reason: string; by: string }
  | { kind: "answer"; taskId: string; text: string; by: string }
  | {
      kind: "resolve-decision";
      decisionId: string;
      optionId: string;
      note?: string | undefined;
      by: string;
      /** Fresh id minted by the caller; kept only if this call is the one that resolves. */
      resolutionId: string;
    }
  | { kind: "cancel"; taskId: string; by: string; reason?: string | undefined }
  /** Rule 12 stop: cancel the item, keep its work, turn continuous off. */
  | { kind: "stop"; taskId: string; by: string }
  /**
   * Rule 12: a start makes the project active with a fresh session budget (the only place
   * the session counter restarts), optionally limited to one stage.
   */
  | {
      kind: "start-project";
      by: string;
      stage: string | null;
      sessionsLimit: number | null;
      continuous?: boolean | undefined;
    }
  /** A validated task graph, all cards or none (ids must be new, prerequisites must exist). */
  | { kind: "import-tasks"; tasks: readonly TaskCardInput[]; by: string }
  /**
   * Starts a mission: the project becomes active and continuous with a fresh session budget
   * and a planning task for the objective. `budgetUsd` is stored beside the project's spend.
   */
  | {
      kind: "start-mission";
      objective: string;
      stage: string | null;
      sessionsLimit: number | null;
      maxRounds: number;
      budgetUsd?: number | null | undefined;
      by: string;
    }
  /**
   * Registers a project (`overseer init`, POST /api/v1/projects). Applied where no project of
   * that id exists yet; against an existing project it is refused (`already_exists`).
   */
  | { kind: "create-project"; project: NewProject; by: string }
  /** Changes operator settings (runner config, objective, concurrency, budget); records the keys. */
  | { kind: "update-project-config"; patch: ProjectSettingsPatch; by: string }
  | {
      kind: "set-project-status";
      status: "active" | "paused" | "stopped";
      by: string;
      reason?: string | undefined;
      /** A pause because a bound was reached (the coordinator's budget check): recorded on an open mission. */
      bound?: MissionBound | undefined;
    };

/** What an approve in pull_request mode asks for: a pull request of the PR branch (rule 14). */
export interface PullRequestLanding {
  /**
   * The landing branch. Stacked (`prerequisites: stacked`), the pull request targets instead
   * the PR branch of a prerequisite whose pull request is still open (`pullRequestBase`).
   */
  readonly base: string;
  /** `landing.pull_request.prerequisites`; default `merged`. */
  readonly prerequisites?: PrerequisiteMode | undefined;
  /** The commit the worker pushed to the PR branch (the reviewed head). */
  readonly headSha?: string | null | undefined;
}

/**
 * What the coordinator's forge runner reports about a task's pull request (rules 15–18). Each
 * is idempotent: one about another head than the approved one (`headSha`), or one that changes
 * nothing the task records, is `already_applied`.
 */
export type PullRequestCommand =
  /** The forge opened (or found) the pull request of the approved head. */
  | { kind: "pr-opened"; taskId: string; number: number; url: string; headSha: string }
  /** The combined checks of the approved head; a failure carries each failing check and its log tail. */
  | {
      kind: "pr-checks";
      taskId: string;
      headSha: string;
      state: PullRequestCheckState;
      failing: readonly FailingCheck[];
      /** Failed CI rounds in a row after which an operator decides: the project's `attempts`. */
      maxAttempts: number;
    }
  /**
   * The human review of the approved head: approvals, whether changes are requested, the
   * unresolved threads and the comments addressing Overseer that no run has answered yet.
   */
  | {
      kind: "pr-review";
      taskId: string;
      headSha: string;
      approvals: number;
      changesRequested: boolean;
      threads: readonly ReviewThread[];
      comments: readonly PullRequestComment[];
      /** `landing.pull_request.required_approvals`. */
      requiredApprovals: number;
    }
  /** Merged, by anyone (Overseer's merge policy or a human). */
  | { kind: "pr-merged"; taskId: string; mergeCommitSha: string; mergedBy: string | null }
  /** Closed unmerged. */
  | {
      kind: "pr-closed";
      taskId: string;
      /** `landing.pull_request.on_closed`. */
      onClosed: PullRequestOnClosed;
      closedBy?: string | null | undefined;
    }
  /** The base moved and the approved head no longer merges: the landing-failure path (rule 3). */
  | {
      kind: "pr-conflict";
      taskId: string;
      headSha: string;
      files: readonly string[];
      details?: string | undefined;
      /** The project's `attempts` (failed landings in a row before an operator decides). */
      maxAttempts: number;
    };

export type CommandKind = Command["kind"];

/** Run rules a worker enforces itself; each breach is recorded as an incident of that kind. */
export const RUN_VIOLATION_KINDS = ["forbidden_transition", "disk_limit"] as const;
export type RunViolationKind = (typeof RUN_VIOLATION_KINDS)[number];

export const RUN_OUTCOME_KINDS = [
  "run-started",
  "submit",
  "approve",
  "reject",
  "land-failed",
  "escalate",
  "timeout",
  "no-transition",
  "run-misconfigured",
  "scope-violation",
  "run-violation",
  "propose",
] as const satisfies readonly CommandKind[];

export const OPERATOR_COMMAND_KINDS = [
  "release-external",
  "answer",
  "resolve-decision",
  "cancel",
  "stop",
  "set-project-status",
  "start-project",
  "import-tasks",
  "start-mission",
  "create-project",
  "update-project-config",
] as const satisfies readonly CommandKind[];

/** The forge runner's commands about a task's pull request. */
export const PULL_REQUEST_COMMAND_KINDS = [
  "pr-opened",
  "pr-checks",
  "pr-review",
  "pr-merged",
  "pr-closed",
  "pr-conflict",
] as const satisfies readonly CommandKind[];

export function commandRunId(command: Command): string | null {
  return "runId" in command ? command.runId : null;
}
