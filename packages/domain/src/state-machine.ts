/**
 * The task state machine (docs/state-machine.md) as one pure function:
 *
 *   applyCommand(state, command, ctx) → { state', changes, events, incidents }
 *
 * Nothing here performs I/O. Callers load a ProjectState, apply one command, and persist
 * `changes` in a single transaction (optimistic concurrency on each changed task's
 * version). Time and ids come from `ctx`, so every sequence is replayable in tests.
 *
 * Transitions at a glance:
 *
 *   claim            todo → in_progress (execute/resolve run queued); review → review run queued
 *   submit           in_progress → review                      (executor/resolver run)
 *   approve          review → done; a done resolver returns its original to todo/review
 *   reject           review → todo with the reviewer's feedback
 *   land-failed      review → todo: approved but a real conflict or a failed check kept it
 *                    from landing; the next executor integrates the main branch
 *   escalate         in_progress|review → blocked + resolver (todo, or awaiting_input at the
 *                    depth-3 / 6-remediation limits or when the agent needs the user)
 *   timeout          like escalate, reason = the timeout (rule 8)
 *   no-transition    retry with backoff up to maxAttempts, then escalate (rule 9)
 *   scope-violation  incident + awaiting_input resolver + project paused (rule 10)
 *   run-violation    incident + escalate (a forbidden transition or the disk limit; nothing landed)
 *   run-misconfigured awaiting_input with a card saying what to set
 *   start-mission    active + continuous, planning task for the objective (mission.ts)
 *   propose          planning task in_progress → review with its plan or completion evidence
 *   operator         release-external, answer, resolve-decision, cancel, stop, project status
 *   start-project    active with a fresh session budget (rule 12), records project.started
 *   import-tasks     new todo tasks from a validated task file, all or none
 *   create-project   a new project (applyProjectCreation; against an existing one: already_exists)
 *   update-project-config  operator settings (runner config, objective, concurrency, budget)
 *
 * `awaiting_input` is left only through an operator command.
 */
import type { Command, OptionCommandInput, Usage } from "./command.ts";
import {
  CUSTOM_OPTION_ID,
  type Decision,
  type DecisionEvidence,
  type DecisionOption,
  decisionIdFor,
  normaliseOptions,
  STOP_OPTION_ID,
  SYSTEM_OPTIONS,
} from "./decision.ts";
import { DomainError } from "./domain-error.ts";
import type { DomainEvent, DomainEventType, Incident } from "./domain-event.ts";
import {
  APPROVE_PLAN_OPTION_ID,
  type MissionBound,
  type MissionState,
  PLANNER_ROLE,
  type PlanApproval,
  type PlanCard,
  type Proposal,
  REJECT_PLAN_OPTION_ID,
} from "./mission.ts";
import {
  changedSettings,
  checkProjectSettings,
  type NewProject,
  type ProjectSettingsPatch,
} from "./project-settings.ts";
import {
  type DomainContext,
  type ProjectControl,
  type ProjectState,
  STAGE_EXPECTED,
  STAGE_PATTERN,
} from "./project-state.ts";
import { formatAgentId, isActiveRun, type Run, type RunAction } from "./run.ts";
import { activeRunCount, nextAction, runnableTasks } from "./scheduler.ts";
import {
  type AwaitingReason,
  newTask,
  TASK_DEFAULTS,
  type Task,
  TERMINAL_TASK_STATUSES,
  taskFromCard,
} from "./task.ts";

/** Rule 6: a resolver deeper than this is created awaiting_input. */
export const MAX_RESOLVER_DEPTH = 3;
/** Rule 6: the 7th remediation under one root task is created awaiting_input. */
export const MAX_REMEDIATIONS_PER_ROOT = 6;

export interface Changes {
  readonly project: ProjectControl | null;
  /** create-project: the project row to insert (before anything else). */
  readonly createdProject: NewProject | null;
  /** update-project-config: the operator settings to write with the project row. */
  readonly settings: ProjectSettingsPatch | null;
  /** Tasks whose fields changed; `version` is still the loaded one (the expected version). */
  readonly tasks: readonly Task[];
  readonly createdTaskIds: ReadonlySet<string>;
  readonly runs: readonly Run[];
  readonly createdRunIds: ReadonlySet<string>;
  readonly decisions: readonly Decision[];
  readonly createdDecisionIds: ReadonlySet<string>;
}

export interface ApplyResult {
  /** `already_applied`: the command was a redelivery (its run had already ended, or the same resolution). */
  readonly outcome: "applied" | "already_applied";
  readonly state: ProjectState;
  readonly changes: Changes;
  readonly events: readonly DomainEvent[];
  readonly incidents: readonly Incident[];
  /** For resolve-decision / answer: the resolution that holds now. */
  readonly resolution: {
    readonly decisionId: string;
    readonly resolutionId: string;
    readonly optionId: string;
  } | null;
}

export function applyCommand(state: ProjectState, command: Command, ctx: DomainContext): ApplyResult {
  const draft = new Draft(state, ctx);
  switch (command.kind) {
    case "claim":
      claim(draft, command.stage ?? state.project.stage);
      break;
    case "run-started": {
      const run = draft.activeRun(command.runId);
      const started = { workerId: command.workerId, startedAt: draft.ctx.now };
      if (run?.status === "queued") {
        draft.putRun({ ...run, status: "running", ...started });
        draft.event("run.started", run, { workerId: command.workerId });
        break;
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
        break;
      }
      // Repeated (same worker), late (an older start) or the run already ended: nothing to apply.
      return draft.alreadyApplied();
    }
    case "submit":
      return submit(draft, command);
    case "approve":
      return approve(draft, command);
    case "reject":
      return reject(draft, command);
    case "land-failed":
      return landFailed(draft, command);
    case "escalate": {
      const { run, task } = draft.outcomeTarget(command.runId, ["in_progress", "review"]) ?? {};
      if (!run || !task) return draft.alreadyApplied();
      draft.endRun(run, { status: "finished", transition: "escalate" }, command.usage);
      draft.event("task.escalated", run, {
        reason: command.reason,
        checkpointRef: command.checkpointRef ?? null,
      });
      // Only ordinary work is replanned; a resolver or planning task escalates as usual.
      if (command.replan && task.kind === "work" && missionOpen(draft.project)) {
        replan(draft, task, run, command.reason);
        break;
      }
      escalateTask(draft, task, run, {
        reason: command.reason,
        needsUser: command.needsUser ?? false,
        category: command.category,
        question: command.question,
        options: command.options,
      });
      break;
    }
    case "timeout": {
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
      break;
    }
    case "no-transition":
      return noTransition(draft, command);
    case "propose":
      return propose(draft, command);
    case "run-misconfigured": {
      const { run, task } = draft.outcomeTarget(command.runId, ["in_progress", "review"]) ?? {};
      if (!run || !task) return draft.alreadyApplied();
      draft.endRun(run, { status: "failed", failure: command.message }, command.usage);
      pauseForConfiguration(draft, task, run, {
        incident: command.reason,
        reason: command.reason,
        title: command.reason === "harness_not_configured" ? "Harness not configured" : "Configuration error",
        message: command.message,
      });
      break;
    }
    case "scope-violation": {
      const { run, task } = draft.outcomeTarget(command.runId, ["in_progress", "review"]) ?? {};
      if (!run || !task) return draft.alreadyApplied();
      const paths = [...command.paths].sort();
      const reason = `Run ${run.agentId} changed paths outside the scope of ${task.id}: ${paths.join(", ")}`;
      draft.endRun(run, { status: "failed", failure: reason }, command.usage);
      draft.incident("scope_violation", task, run, reason, { paths, scope: task.scope });
      escalateTask(draft, task, run, { reason, forceAwaiting: "scope_violation" });
      draft.setProjectStatus("paused", `scope violation in ${task.id}`);
      break;
    }
    case "run-violation": {
      const { run, task } = draft.outcomeTarget(command.runId, ["in_progress", "review"]) ?? {};
      if (!run || !task) return draft.alreadyApplied();
      const reason = `Run ${run.agentId} was refused by its worker (${command.violation}): ${command.detail}`;
      draft.endRun(run, { status: "failed", failure: reason }, command.usage);
      draft.incident(command.violation, task, run, reason, {
        action: run.action,
        checkpointRef: command.checkpointRef ?? null,
      });
      escalateTask(draft, task, run, { reason });
      break;
    }
    case "release-external":
      releaseExternal(draft, command);
      break;
    case "answer":
      answer(draft, command);
      break;
    case "resolve-decision":
      return resolveDecision(draft, command);
    case "cancel": {
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
      cancelTask(draft, task, command.by, command.reason ?? "cancelled by operator");
      const parent = task.parentId ? draft.tasks.get(task.parentId) : undefined;
      if (parent && parent.status === "blocked" && parent.blockedBy === task.id) {
        awaitInput(draft, { ...parent, blockedBy: null }, parent.returnTo ?? "todo", "other", {
          title: `Resolver ${task.id} was cancelled`,
          reason: `The resolver working on this task's blocker was cancelled by ${command.by}.`,
          question: `How should ${parent.id} continue now that its resolver ${task.id} is cancelled?`,
        });
      }
      break;
    }
    case "stop":
      stopItem(draft, draft.task(command.taskId), command.by);
      break;
    case "start-project":
      startProject(draft, command);
      break;
    case "import-tasks":
      importTasks(draft, command);
      break;
    case "start-mission":
      startMission(draft, command);
      break;
    case "create-project":
      throw new DomainError(
        "already_exists",
        `Project ${state.project.id} already exists; choose another id (or update it: overseer init --update).`,
        { projectId: state.project.id },
      );
    case "update-project-config": {
      checkProjectSettings(command.patch);
      const changed = changedSettings(command.patch);
      if (changed.length === 0) break;
      draft.project = {
        ...draft.project,
        concurrency: command.patch.concurrency ?? draft.project.concurrency,
      };
      draft.settings = command.patch;
      draft.event("project.config_updated", { taskId: null, id: null }, { changed, by: command.by });
      break;
    }
    case "set-project-status":
      if (command.status === "stopped") {
        // The runs are cancelled but their tasks are not: an executor's task goes back to
        // `todo` (a reviewer's stays in `review`) so a later start schedules it again.
        for (const run of draft.runs.values()) {
          // A landed run is past cancelling: its result finishes its task (refuseIfLanded).
          if (!isActiveRun(run) || run.transition === "approve") continue;
          cancelRun(draft, run, "project stopped");
          const task = draft.tasks.get(run.taskId);
          if (task?.status === "in_progress") draft.putTask({ ...task, status: "todo" });
        }
      }
      if (command.status === "paused" && command.bound && missionOpen(draft.project)) {
        pauseAtBound(draft, command.bound, command.reason ?? `${command.bound} bound reached`);
        break;
      }
      draft.setProjectStatus(command.status, command.reason ?? `set by ${command.by}`);
      if (command.status === "active") draft.project = { ...draft.project, sessionsUsed: 0 };
      break;
  }
  return draft.result("applied");
}

// ---------------------------------------------------------------------------------------
// Project creation, start and task import

/**
 * `create-project` where no project of that id exists yet (applyCommand needs a project's
 * state; a project that exists refuses the command there): the checked settings become the new
 * project, recorded by `project.created` (the runner config's keys, never its values).
 */
export function applyProjectCreation(
  command: Extract<Command, { kind: "create-project" }>,
  ctx: DomainContext,
): ApplyResult {
  const { project } = command;
  checkProjectSettings(project);
  const control: ProjectControl = {
    id: project.id,
    status: project.status,
    statusReason: null,
    continuous: project.continuous,
    concurrency: project.concurrency,
    sessionsLimit: null,
    sessionsUsed: 0,
    stage: null,
    mission: null,
    version: 0,
  };
  const draft = new Draft({ project: control, tasks: new Map(), runs: new Map(), decisions: new Map() }, ctx);
  draft.createdProject = project;
  draft.event(
    "project.created",
    { taskId: null, id: null },
    {
      name: project.name,
      repo: project.repo,
      branch: project.branch,
      repoKind: project.repoKind,
      status: project.status,
      concurrency: project.concurrency,
      runnerConfigKeys: Object.keys(project.runnerConfig).sort(),
      by: command.by,
    },
  );
  return draft.result("applied");
}

/** Cards `overseer start` answers: the operator fixed the configuration and started again. */
const CONFIGURATION_REASONS: ReadonlySet<AwaitingReason> = new Set([
  "configuration_error",
  "harness_not_configured",
]);

/** A stage given to `start` or a mission must be a stage name (STAGE_PATTERN), whoever sends it. */
function requireStageName(stage: string | null): void {
  if (stage !== null && !STAGE_PATTERN.test(stage))
    throw new DomainError(
      "invalid_settings",
      `The stage must be ${STAGE_EXPECTED}; received ${JSON.stringify(stage)}.`,
      {
        stage,
      },
    );
}

function startProject(draft: Draft, command: Extract<Command, { kind: "start-project" }>): void {
  requireStageName(command.stage);
  const from = draft.project.status;
  for (const task of [...draft.tasks.values()]) {
    if (
      task.status !== "awaiting_input" ||
      !task.awaitingReason ||
      !CONFIGURATION_REASONS.has(task.awaitingReason)
    )
      continue;
    const pending = pendingDecisionOf(draft, task.id);
    const answer = "Continue: the configuration was fixed and the project started again.";
    if (pending) draft.resolveCard(pending, "continue", answer, command.by, draft.ctx.newRunId());
    releaseWithAnswer(draft, task, pending?.question ?? task.statusReason ?? "", answer, command.by);
  }
  draft.project = {
    ...draft.project,
    status: "active",
    statusReason: null,
    stage: command.stage,
    sessionsLimit: command.sessionsLimit,
    sessionsUsed: 0,
    ...(command.continuous !== undefined ? { continuous: command.continuous } : {}),
  };
  draft.event(
    "project.started",
    { taskId: null, id: null },
    { from, stage: command.stage, sessionsLimit: command.sessionsLimit, by: command.by },
  );
}

function importTasks(draft: Draft, command: Extract<Command, { kind: "import-tasks" }>): void {
  const incoming = new Set<string>();
  for (const card of command.tasks) {
    if (draft.tasks.has(card.id) || incoming.has(card.id)) {
      throw new DomainError(
        "conflict",
        `A task with id ${card.id} already exists; nothing was imported. Choose new ids and retry.`,
        { taskId: card.id },
      );
    }
    incoming.add(card.id);
  }
  for (const card of command.tasks) {
    const unknown = card.prerequisites.filter((p) => !draft.tasks.has(p) && !incoming.has(p));
    if (unknown.length > 0) {
      throw new DomainError(
        "conflict",
        `Task ${card.id} names prerequisites that do not exist (${unknown.join(", ")}); nothing was imported.`,
        { taskId: card.id, unknown },
      );
    }
  }
  for (const card of command.tasks) {
    draft.addTask(taskFromCard(draft.project.id, card));
  }
  if (command.tasks.length > 0) {
    draft.event(
      "task.imported",
      { taskId: null, id: null },
      { count: command.tasks.length, taskIds: command.tasks.map((t) => t.id), by: command.by },
    );
  }
}

// ---------------------------------------------------------------------------------------
// Run outcomes

function submit(draft: Draft, command: Extract<Command, { kind: "submit" }>): ApplyResult {
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

/** The task an executor's submission leaves: in review at its new head, feedback and retry state cleared. */
function inReview(task: Task, run: Run, branchHead: string | null): Task {
  return {
    ...task,
    status: "review",
    executorAgentId: run.agentId,
    branchHead: branchHead ?? task.branchHead,
    feedback: null,
    landing: null,
    failures: 0,
    notBefore: null,
    statusReason: null,
  };
}

/** A reviewer approved the task: it is done, and `task.approved` names its executor. */
function markApproved(
  draft: Draft,
  task: Task,
  run: Run,
  approval: { feedback: string | null; landedSha: string | null; landedBranch: string | null },
): void {
  draft.putTask({
    ...task,
    status: "done",
    failures: 0,
    notBefore: null,
    statusReason: null,
    landingFailures: 0,
  });
  draft.event("task.approved", run, { ...approval, executorAgentId: task.executorAgentId });
}

function approve(draft: Draft, command: Extract<Command, { kind: "approve" }>): ApplyResult {
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
  markApproved(draft, task, run, {
    feedback: command.feedback ?? null,
    landedSha: command.landedSha,
    landedBranch: command.landedBranch,
  });
  // Rule 5: only a done resolver unblocks its original.
  const parent = task.kind === "resolver" && task.parentId ? draft.tasks.get(task.parentId) : undefined;
  if (parent && parent.status === "blocked" && parent.blockedBy === task.id) {
    const returnTo = parent.returnTo ?? "todo";
    draft.putTask({
      ...parent,
      status: returnTo,
      blockedBy: null,
      returnTo: null,
      statusReason: null,
      feedback: `Blocker resolved by ${task.id} (${task.title}).${command.feedback ? ` Reviewer notes: ${command.feedback}` : ""}`,
    });
    draft.event(
      "task.unblocked",
      { taskId: parent.id, id: run.id },
      { resolverId: task.id, status: returnTo },
    );
  }
  return draft.result("applied");
}

function reject(draft: Draft, command: Extract<Command, { kind: "reject" }>): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  requireAction(run, ["review"], "reject");
  draft.endRun(run, { status: "finished", transition: "reject" }, command.usage);
  draft.putTask({ ...task, status: "todo", feedback: command.feedback, failures: 0, notBefore: null });
  draft.event("task.rejected", run, { feedback: command.feedback });
  return draft.result("applied");
}

/** Characters of a failed landing's details kept in the feedback and the event (the tail). */
export const LANDING_DETAILS_KEEP_CHARS = 4000;

function landFailed(draft: Draft, command: Extract<Command, { kind: "land-failed" }>): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  requireAction(run, ["review"], "land-failed");
  if (run.agentId === task.executorAgentId) {
    throw new DomainError(
      "invalid_transition",
      `Reviewer ${run.agentId} is the executor of ${task.id}; a fresh reviewer must approve.`,
    );
  }
  const files = [...new Set(command.files)].sort();
  const details =
    command.details.length > LANDING_DETAILS_KEEP_CHARS
      ? `[… ${command.details.length - LANDING_DETAILS_KEEP_CHARS} chars omitted]\n${command.details.slice(-LANDING_DETAILS_KEEP_CHARS)}`
      : command.details;
  const branch = command.branch;
  const what =
    command.reason === "conflict"
      ? `The approved work could not land on ${branch}: it conflicts with ${branch} in ${files.length > 0 ? files.join(", ") : "its history"}. Your checkout has ${branch} merged in, with the conflict markers committed in those files: resolve every conflict, keeping the intent of both sides, then submit.`
      : `The approved work merged cleanly with ${branch}, but the project's check command failed on the integrated tree. Your checkout has ${branch} merged in: make the check pass, then submit.`;
  const feedback = [
    what,
    details.trim()
      ? `${command.reason === "conflict" ? "Git" : "Check output (tail)"}:\n${details.trim()}`
      : "",
    command.reviewerFeedback?.trim() ? `Reviewer notes: ${command.reviewerFeedback.trim()}` : "",
  ]
    .filter((part) => part !== "")
    .join("\n\n");
  draft.endRun(run, { status: "finished", transition: "approve" }, command.usage);
  const landingFailures = task.landingFailures + 1;
  const next: Task = {
    ...task,
    status: "todo",
    feedback,
    landing: { reason: command.reason, files },
    landingFailures,
    failures: 0,
    notBefore: null,
    statusReason: null,
  };
  draft.event("task.landing_failed", run, {
    reason: command.reason,
    files,
    details,
    branch,
    executorAgentId: task.executorAgentId,
    attempt: landingFailures,
    maxAttempts: command.maxAttempts,
  });
  if (landingFailures < command.maxAttempts) {
    draft.putTask(next);
    return draft.result("applied");
  }
  // The limit: an operator decides; releasing it starts a fresh count with main merged in.
  const failure =
    command.reason === "conflict"
      ? `conflicts with ${branch} in ${files.join(", ") || "its history"}`
      : "fails the check command once merged";
  const reason = `Approved work of ${task.id} failed to land ${landingFailures} times in a row; it ${failure}.`;
  awaitInput(draft, { ...next, landingFailures: 0 }, "todo", "other", {
    title: "Landing keeps failing",
    reason,
    question: `${reason} Answer to send it to a new executor (with ${branch} merged in and your answer in its prompt), or stop it.`,
  });
  return draft.result("applied");
}

function noTransition(draft: Draft, command: Extract<Command, { kind: "no-transition" }>): ApplyResult {
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
      message: `The agent does not follow the protocol: ${failures} runs of ${task.id} in a row ended without calling overseer-agent (the last: ${run.agentId}, ${command.detail}). Fix: use a model that runs shell commands and follows the prompt's overseer-agent instructions (overseer init --project ${task.projectId} --agent NAME --model MODEL --update), or correct the runner config's prompt; then \`overseer start --project ${task.projectId}\` resumes the project and this task.`,
    });
  } else {
    escalateTask(draft, { ...task, failures: 0, notBefore: null }, run, {
      reason: `${reason} (attempt ${failures} of ${command.maxAttempts}; no retries left)`,
    });
  }
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

function requireAction(run: Run, allowed: readonly RunAction[], transition: string): void {
  if (!allowed.includes(run.action)) {
    throw new DomainError(
      "invalid_transition",
      `A ${run.action} run cannot ${transition}; expected one of: ${allowed.map((a) => `${a} run`).join(", ")}.`,
      { action: run.action, transition },
    );
  }
}

// ---------------------------------------------------------------------------------------
// Escalation, resolvers, operator input

interface EscalateOptions {
  reason: string;
  needsUser?: boolean;
  category?: AwaitingReason | undefined;
  question?: string | undefined;
  options?: readonly OptionCommandInput[] | undefined;
  /** Create the resolver awaiting_input with this reason regardless of limits. */
  forceAwaiting?: AwaitingReason;
}

/**
 * Rules 4–6: the task becomes `blocked` and a resolver is created `todo` with the
 * original's scope and prerequisites (not depending on the original); beyond the depth or
 * remediation limits, or when the agent needs the user, the resolver is created
 * `awaiting_input` with a decision card instead.
 */
function escalateTask(draft: Draft, task: Task, run: Run, options: EscalateOptions): void {
  const rootId = task.rootId ?? task.id;
  const depth = task.depth + 1;
  let remediations = 0;
  for (const t of draft.tasks.values()) if (t.kind === "resolver" && t.rootId === rootId) remediations++;
  const overLimit = depth > MAX_RESOLVER_DEPTH || remediations >= MAX_REMEDIATIONS_PER_ROOT;

  const resolverId = draft.freshTaskId(`${task.id}.R`);
  const returnTo = run.action === "review" ? "review" : "todo";
  draft.putTask({
    ...task,
    status: "blocked",
    statusReason: options.reason,
    blockedBy: resolverId,
    returnTo,
    retiredAgentIds: [...task.retiredAgentIds, run.agentId],
    // The run ended with a transition (or became a remediation): the count of consecutive
    // failed runs starts over, so the task gets its full retry budget once unblocked (rule 9).
    failures: 0,
    notBefore: null,
  });
  draft.event("task.blocked", run, { resolverId, reason: options.reason });

  const resolver = newTask({
    projectId: task.projectId,
    id: resolverId,
    stage: task.stage,
    title: `Resolve blocker of ${task.id}: ${oneLine(options.reason, 80)}`,
    body: [
      `The ${run.action} run ${run.agentId} of task ${task.id} ("${task.title}") was blocked.`,
      "",
      "Blocker:",
      options.reason,
      "",
      `Remove this blocker within the scope below so that ${task.id} can continue. Do not do ${task.id}'s own work.`,
    ].join("\n"),
    role: task.role,
    scope: task.scope,
    prerequisites: task.prerequisites,
    acceptance: [`The blocker of ${task.id} described above no longer stands.`],
    priority: task.priority,
    kind: "resolver",
    parentId: task.id,
    rootId,
    depth,
  });
  draft.addTask(resolver);
  draft.event(
    "resolver.created",
    { taskId: resolverId, id: run.id },
    {
      parentId: task.id,
      rootId,
      depth,
      remediation: remediations + 1,
    },
  );

  const awaiting: AwaitingReason | null = overLimit
    ? "blocker_limit"
    : (options.forceAwaiting ?? (options.needsUser ? (options.category ?? "product_question") : null));
  if (awaiting === null) return;
  const agentOptions = options.needsUser && !overLimit ? normaliseOptions(options.options ?? []) : [];
  const limitText = overLimit
    ? depth > MAX_RESOLVER_DEPTH
      ? `Resolver depth ${depth} exceeds ${MAX_RESOLVER_DEPTH}.`
      : `This would be remediation ${remediations + 1} under ${rootId} (limit ${MAX_REMEDIATIONS_PER_ROOT}).`
    : null;
  awaitInput(draft, draft.task(resolverId), "todo", awaiting, {
    title: limitText ? `Blocker limit reached under ${rootId}` : `Needs you: ${oneLine(options.reason, 80)}`,
    reason: limitText ? `${limitText} ${options.reason}` : options.reason,
    question: options.question ?? (limitText ? `Should ${resolverId} run anyway?` : options.reason),
    options: agentOptions.length > 0 ? agentOptions : undefined,
  });
}

interface CardText {
  title: string;
  reason: string;
  question: string;
  options?: readonly DecisionOption[] | undefined;
  evidence?: readonly DecisionEvidence[] | undefined;
}

/** Puts a task in `awaiting_input` with a pending decision card (revision bumps on re-ask). */
function awaitInput(
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
function releaseWithAnswer(draft: Draft, task: Task, question: string, answerText: string, by: string): void {
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

function pendingDecisionOf(draft: Draft, taskId: string): Decision | undefined {
  const d = draft.decisions.get(decisionIdFor(taskId));
  return d?.status === "pending" ? d : undefined;
}

function releaseExternal(draft: Draft, command: Extract<Command, { kind: "release-external" }>): void {
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
}

function answer(draft: Draft, command: Extract<Command, { kind: "answer" }>): void {
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
  else releaseWithAnswer(draft, task, pending?.question ?? "Operator message", command.text, command.by);
  draft.event(
    "task.answered",
    { taskId: task.id, id: null },
    { by: command.by, decisionId: pending?.id ?? null },
  );
}

function resolveDecision(draft: Draft, command: Extract<Command, { kind: "resolve-decision" }>): ApplyResult {
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

/** Rule 12: cancel the item (and the blocked originals waiting on it), keep its work, continuous off. */
function stopItem(draft: Draft, task: Task, by: string): void {
  if (TERMINAL_TASK_STATUSES.has(task.status)) {
    throw new DomainError("invalid_transition", `Task ${task.id} is already ${task.status}.`);
  }
  refuseIfLanded(draft, task);
  let current: Task | undefined = task;
  while (current) {
    cancelTask(draft, current, by, "stopped by operator; its work is kept on its branch");
    const parent: Task | undefined = current.parentId ? draft.tasks.get(current.parentId) : undefined;
    current = parent && parent.status === "blocked" && parent.blockedBy === current.id ? parent : undefined;
  }
  if (draft.project.continuous) draft.project = { ...draft.project, continuous: false };
}

/**
 * A review run whose landing push went through is recorded with its `approve` while it still
 * runs (the worker's run fence, in the transaction around the push): the work is on the
 * landing branch, so its task can no longer be cancelled or stopped; the run's result
 * finishes it.
 */
function refuseIfLanded(draft: Draft, task: Task): void {
  for (const run of draft.runs.values()) {
    if (run.taskId !== task.id || !isActiveRun(run) || run.transition !== "approve") continue;
    throw new DomainError(
      "invalid_transition",
      `Task ${task.id}'s approved work has already landed (run ${run.id} pushed it); it can no longer be cancelled and is done once that run's result is applied.`,
      { runId: run.id, status: task.status },
    );
  }
}

function cancelTask(draft: Draft, task: Task, by: string, reason: string): void {
  const current = draft.task(task.id);
  draft.putTask({ ...current, status: "cancelled", statusReason: reason, notBefore: null });
  for (const run of draft.runs.values())
    if (run.taskId === task.id && isActiveRun(run)) cancelRun(draft, run, reason);
  const pending = pendingDecisionOf(draft, task.id);
  if (pending)
    draft.resolveCard(pending, STOP_OPTION_ID, reason, by, pending.resolutionId ?? draft.ctx.newRunId());
  draft.event("task.cancelled", { taskId: task.id, id: null }, { by, reason });
  // A cancelled task's open resolvers have nothing left to unblock: no continuation.
  for (const child of draft.tasks.values()) {
    if (
      child.parentId === task.id &&
      child.kind === "resolver" &&
      !TERMINAL_TASK_STATUSES.has(child.status)
    ) {
      cancelTask(draft, child, by, `its original ${task.id} was cancelled`);
    }
  }
}

function cancelRun(draft: Draft, run: Run, reason: string): void {
  draft.putRun({ ...run, status: "cancelled", failure: reason });
  draft.event("run.cancelled", run, { reason });
}

// ---------------------------------------------------------------------------------------
// Missions (see mission.ts)

/** A mission that still plans and continues: started, not completed. */
function missionOpen(project: ProjectControl): project is ProjectControl & { mission: MissionState } {
  return project.mission !== null && project.mission.evidence === null;
}

function startMission(draft: Draft, command: Extract<Command, { kind: "start-mission" }>): void {
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
}

/** Creates the next planning task (round + 1) with `feedback` as its handoff. */
function addPlanningRound(draft: Draft, feedback: string | null): Task {
  const mission = draft.project.mission as MissionState;
  const round = mission.round + 1;
  const id = draft.freshTaskId("MISSION-R");
  const planning = newTask({
    projectId: draft.project.id,
    id,
    stage: mission.stage ?? TASK_DEFAULTS.stage,
    title: `Mission round ${round}: ${round === 1 ? "plan" : "continue"} — ${oneLine(mission.objective, 80)}`,
    body: mission.objective,
    role: PLANNER_ROLE,
    // A planner reads the repository and changes nothing: its plan goes through overseer-agent.
    scope: [".overseer/**"],
    acceptance: [
      "Either a task graph that moves the objective forward, each task small, scoped and testable,",
      "or completion evidence showing the objective is met.",
    ],
    priority: 0,
    kind: "plan",
    feedback,
  });
  draft.addTask(planning);
  draft.project = { ...draft.project, mission: { ...mission, round } };
  if (round > 1) draft.event("mission.continued", { taskId: id, id: null }, { round });
  return planning;
}

/**
 * Continuation: a continuous mission whose tasks are all done or cancelled gets its next
 * planning round, or pauses with a summary once its round limit is reached.
 */
function continueMission(draft: Draft): void {
  const project = draft.project;
  if (!missionOpen(project) || !project.continuous) return;
  for (const t of draft.tasks.values()) if (!TERMINAL_TASK_STATUSES.has(t.status)) return;
  for (const r of draft.runs.values()) if (isActiveRun(r)) return;
  if (project.mission.round >= project.mission.maxRounds) {
    pauseAtBound(draft, "rounds", `mission round limit (${project.mission.maxRounds}) reached`);
    return;
  }
  addPlanningRound(draft, null);
}

/**
 * Pauses an open mission at a bound. The reason (with the task counts) becomes the project's
 * status reason and is kept on `mission.bound_reached`, so a reader can tell whether the
 * project still stands paused by that bound (docs/state-machine.md, missions).
 */
function pauseAtBound(draft: Draft, bound: MissionBound, what: string): void {
  const summary = statusCounts(draft);
  const counts = Object.entries(summary)
    .map(([status, n]) => `${n} ${status}`)
    .join(", ");
  const reason = `${what} (tasks: ${counts}); start again to continue`;
  draft.setProjectStatus("paused", reason);
  draft.event("mission.bound_reached", { taskId: null, id: null }, { bound, reason, summary });
}

/** `escalate --replan`: the task is cancelled (work kept) and a planning round replaces it. */
function replan(draft: Draft, task: Task, run: Run, reason: string): void {
  cancelTask(draft, task, run.agentId, `replan requested: ${oneLine(reason, 200)}`);
  draft.event("mission.replan_requested", run, { reason });
  const mission = (draft.project as ProjectControl & { mission: MissionState }).mission;
  const open = [...draft.tasks.values()].some(
    (t) => t.kind === "plan" && !TERMINAL_TASK_STATUSES.has(t.status),
  );
  if (open) return; // a planning round is already under way; it will see the cancelled task
  if (mission.round >= mission.maxRounds) {
    pauseAtBound(draft, "rounds", `mission round limit (${mission.maxRounds}) reached at a replan request`);
    return;
  }
  addPlanningRound(
    draft,
    `Replan requested by ${run.agentId} while working on ${task.id} ("${task.title}"), which was cancelled:\n${reason}`,
  );
}

function propose(draft: Draft, command: Extract<Command, { kind: "propose" }>): ApplyResult {
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

/** What keeps a plan from being imported as one whole into the current project. */
function planProblems(draft: Draft, cards: readonly PlanCard[]): string[] {
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

function approveProposal(
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

function awaitsPlanApproval(task: Task): boolean {
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
function approvePlanByOperator(draft: Draft, task: Task, by: string, note: string | null): void {
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
function rejectPlan(draft: Draft, task: Task, feedback: string, by: string): void {
  replanWithFeedback(
    draft,
    task,
    `The operator (${by}) rejected your plan; nothing was imported. Their feedback:\n${feedback}`,
  );
  draft.event("mission.plan_rejected", { taskId: task.id, id: null }, { by, feedback });
}

// ---------------------------------------------------------------------------------------
// Claim (scheduler)

function claim(draft: Draft, stage: string | null): void {
  const project = draft.project;
  if (project.status !== "active") return;
  continueMission(draft);
  if (draft.project.status !== "active") return;
  const state = draft.snapshot();
  const candidates = runnableTasks(state, draft.ctx.now, stage);
  if (candidates.length === 0) return;
  let free = project.concurrency - activeRunCount(state);
  for (const task of candidates) {
    if (free <= 0) break;
    const p = draft.project;
    if (p.sessionsLimit !== null && p.sessionsUsed >= p.sessionsLimit) {
      if (activeRunCount(draft.snapshot()) === 0) {
        if (missionOpen(p)) pauseAtBound(draft, "sessions", `max_sessions (${p.sessionsLimit}) reached`);
        else
          draft.setProjectStatus(
            "paused",
            `max_sessions (${p.sessionsLimit}) reached; start again to continue`,
          );
        draft.event(
          "project.sessions_exhausted",
          { taskId: null, id: null },
          {
            sessionsLimit: p.sessionsLimit,
            summary: statusCounts(draft),
          },
        );
      }
      return;
    }
    const action = nextAction(task);
    const run: Run = {
      id: draft.ctx.newRunId(),
      projectId: task.projectId,
      taskId: task.id,
      agentId: draft.mintAgentId(action, task),
      action,
      attempt: task.failures + 1,
      status: "queued",
      transition: null,
      failure: null,
      notBefore: null,
      createdAt: draft.ctx.now,
      workerId: null,
      startedAt: null,
    };
    draft.addRun(run);
    if (task.status === "todo") draft.putTask({ ...task, status: "in_progress", notBefore: null });
    else if (task.notBefore !== null) draft.putTask({ ...task, notBefore: null });
    draft.project = { ...draft.project, sessionsUsed: draft.project.sessionsUsed + 1 };
    draft.event("run.queued", run, { action, agentId: run.agentId, attempt: run.attempt });
    free--;
  }
}

function statusCounts(draft: Draft): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const t of draft.tasks.values()) counts[t.status] = (counts[t.status] ?? 0) + 1;
  return counts;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

// ---------------------------------------------------------------------------------------
// Draft: copy-on-write working state that records what changed

class Draft {
  readonly tasks: Map<string, Task>;
  readonly runs: Map<string, Run>;
  readonly decisions: Map<string, Decision>;
  project: ProjectControl;
  createdProject: NewProject | null = null;
  settings: ProjectSettingsPatch | null = null;
  resolution: ApplyResult["resolution"] = null;
  private readonly changedTasks = new Set<string>();
  private readonly createdTasks = new Set<string>();
  private readonly changedRuns = new Set<string>();
  private readonly createdRuns = new Set<string>();
  private readonly changedDecisions = new Set<string>();
  private readonly createdDecisions = new Set<string>();
  private readonly events: DomainEvent[] = [];
  private readonly incidents: Incident[] = [];

  constructor(
    private readonly initial: ProjectState,
    readonly ctx: DomainContext,
  ) {
    this.tasks = new Map(initial.tasks);
    this.runs = new Map(initial.runs);
    this.decisions = new Map(initial.decisions);
    this.project = initial.project;
  }

  task(id: string): Task {
    const task = this.tasks.get(id);
    if (!task) throw new DomainError("not_found", `Task ${id} does not exist in project ${this.project.id}.`);
    return task;
  }

  /** The run if it is still active; undefined if it already ended (redelivery); throws if unknown. */
  activeRun(runId: string): Run | undefined {
    const run = this.runs.get(runId);
    if (!run) throw new DomainError("not_found", `Run ${runId} is unknown to project ${this.project.id}.`);
    return isActiveRun(run) ? run : undefined;
  }

  /** Run and task for a run outcome; undefined when the outcome was already applied. */
  outcomeTarget(
    runId: string,
    taskStatuses: readonly Task["status"][],
  ): { run: Run; task: Task } | undefined {
    const run = this.activeRun(runId);
    if (!run) return undefined;
    const task = this.task(run.taskId);
    if (!taskStatuses.includes(task.status)) {
      throw new DomainError(
        "invalid_transition",
        `Task ${task.id} is ${task.status}; a ${run.action} run's outcome needs it in ${taskStatuses.join(" or ")}.`,
        { status: task.status },
      );
    }
    return { run, task };
  }

  /** Stores a changed task. */
  putTask(task: Task): void {
    this.tasks.set(task.id, task);
    this.changedTasks.add(task.id);
  }

  /** Stores a task the command creates (inserted rather than updated). */
  addTask(task: Task): void {
    this.putTask(task);
    this.createdTasks.add(task.id);
  }

  /** Stores a changed run. */
  putRun(run: Run): void {
    this.runs.set(run.id, run);
    this.changedRuns.add(run.id);
  }

  /** Stores a run the command creates. */
  addRun(run: Run): void {
    this.putRun(run);
    this.createdRuns.add(run.id);
  }

  putDecision(decision: Decision, created = false): void {
    this.decisions.set(decision.id, decision);
    this.changedDecisions.add(decision.id);
    if (created) this.createdDecisions.add(decision.id);
  }

  endRun(
    run: Run,
    end: Pick<Run, "status"> & Partial<Pick<Run, "transition" | "failure">>,
    usage?: Usage,
  ): void {
    this.putRun({ ...run, ...end });
    this.event(end.status === "finished" ? "run.finished" : "run.failed", run, {
      transition: end.transition ?? null,
      failure: end.failure ?? null,
      usage: usage ?? null,
    });
  }

  resolveCard(
    decision: Decision,
    optionId: string,
    note: string | null,
    by: string,
    resolutionId: string,
  ): void {
    this.putDecision({
      ...decision,
      status: "resolved",
      selectedOption: optionId,
      note,
      resolutionId,
      resolvedBy: by,
      resolvedAt: this.ctx.now,
    });
    this.event(
      "decision.resolved",
      { taskId: decision.itemId, id: null },
      {
        decisionId: decision.id,
        optionId,
        resolutionId,
        by,
      },
    );
  }

  setProjectStatus(status: ProjectControl["status"], reason: string | null, by?: string): void {
    if (this.project.status === status) return;
    this.project = { ...this.project, status, statusReason: reason };
    this.event(
      "project.status_changed",
      { taskId: null, id: null },
      { status, reason, ...(by !== undefined ? { by } : {}) },
    );
  }

  event(
    type: DomainEventType,
    subject: { taskId: string | null; id: string | null },
    data: Record<string, unknown>,
  ): void {
    this.events.push({ type, taskId: subject.taskId, runId: subject.id, data });
  }

  incident(
    kind: Incident["kind"],
    task: Task,
    run: Run | null,
    message: string,
    details: Record<string, unknown>,
  ): void {
    this.incidents.push({ kind, taskId: task.id, runId: run?.id ?? null, message, details });
    this.event("incident.recorded", { taskId: task.id, id: run?.id ?? null }, { kind, message });
  }

  /** A fresh agent id: never an active run's, never a retired one, never the task's executor. */
  mintAgentId(action: RunAction, task: Task): string {
    const taken = new Set<string>([
      ...task.retiredAgentIds,
      ...(task.executorAgentId ? [task.executorAgentId] : []),
    ]);
    for (const run of this.runs.values()) taken.add(run.agentId);
    for (;;) {
      const id = formatAgentId(action, task.role, this.ctx.randomHex());
      if (!taken.has(id)) return id;
    }
  }

  freshTaskId(prefix: string): string {
    for (let n = 1; ; n++) if (!this.tasks.has(`${prefix}${n}`)) return `${prefix}${n}`;
  }

  snapshot(): ProjectState {
    return { project: this.project, tasks: this.tasks, runs: this.runs, decisions: this.decisions };
  }

  alreadyApplied(): ApplyResult {
    return {
      outcome: "already_applied",
      state: this.initial,
      changes: emptyChanges(),
      events: [],
      incidents: [],
      resolution: this.resolution,
    };
  }

  result(outcome: ApplyResult["outcome"]): ApplyResult {
    const pick = <T>(map: Map<string, T>, ids: Set<string>): T[] => [...ids].map((id) => map.get(id) as T);
    return {
      outcome,
      state: this.snapshot(),
      changes: {
        project: this.project === this.initial.project ? null : this.project,
        createdProject: this.createdProject,
        settings: this.settings,
        tasks: pick(this.tasks, this.changedTasks),
        createdTaskIds: this.createdTasks,
        runs: pick(this.runs, this.changedRuns),
        createdRunIds: this.createdRuns,
        decisions: pick(this.decisions, this.changedDecisions),
        createdDecisionIds: this.createdDecisions,
      },
      events: this.events,
      incidents: this.incidents,
      resolution: this.resolution,
    };
  }
}

function emptyChanges(): Changes {
  return {
    project: null,
    createdProject: null,
    settings: null,
    tasks: [],
    createdTaskIds: new Set(),
    runs: [],
    createdRunIds: new Set(),
    decisions: [],
    createdDecisionIds: new Set(),
  };
}
