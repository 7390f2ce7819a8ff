/**
 * Project control: creating a project, its settings, starting it (rule 12's fresh session
 * budget), importing tasks, and the project status (pause, stop, resume).
 */
import { DomainError } from "../domain-error.ts";
import { changedSettings, checkProjectSettings } from "../project-settings.ts";
import { type DomainContext, type ProjectControl, STAGE_EXPECTED, STAGE_PATTERN } from "../project-state.ts";
import { isActiveRun } from "../run.ts";
import { taskFromCard } from "../task.ts";
import type { ApplyResult } from "./apply-result.ts";
import { cancelRun } from "./cancellation.ts";
import { CONFIGURATION_REASONS, pendingDecisionOf, releaseWithAnswer } from "./decision-cards.ts";
import { Draft } from "./draft.ts";
import type { CommandOf } from "./handler.ts";
import { missionOpen, pauseAtBound } from "./mission-rounds.ts";

/**
 * `create-project` where no project of that id exists yet (applyCommand needs a project's
 * state; a project that exists refuses the command there): the checked settings become the new
 * project, recorded by `project.created` (the runner config's keys, never its values).
 */
export function applyProjectCreation(command: CommandOf<"create-project">, ctx: DomainContext): ApplyResult {
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

/** A project of this id exists (applyProjectCreation handles the one that does not). */
export function createProject(draft: Draft, _command: CommandOf<"create-project">): ApplyResult {
  throw new DomainError(
    "already_exists",
    `Project ${draft.project.id} already exists; choose another id (or update it: overseer init --update).`,
    { projectId: draft.project.id },
  );
}

/** Operator settings (runner config, objective, concurrency, budget); the event names the changed keys. */
export function updateProjectConfig(draft: Draft, command: CommandOf<"update-project-config">): ApplyResult {
  checkProjectSettings(command.patch);
  const changed = changedSettings(command.patch);
  if (changed.length === 0) return draft.result("applied");
  draft.project = {
    ...draft.project,
    concurrency: command.patch.concurrency ?? draft.project.concurrency,
  };
  draft.settings = command.patch;
  draft.event("project.config_updated", { taskId: null, id: null }, { changed, by: command.by });
  return draft.result("applied");
}

/** Pause, stop or resume; a stop cancels the active runs (their tasks are kept for a later start). */
export function setProjectStatus(draft: Draft, command: CommandOf<"set-project-status">): ApplyResult {
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
    return draft.result("applied");
  }
  const bound = command.status === "paused" ? command.bound : undefined;
  draft.setProjectStatus(command.status, command.reason ?? `set by ${command.by}`, undefined, bound);
  if (command.status === "active") draft.project = { ...draft.project, sessionsUsed: 0 };
  return draft.result("applied");
}

/** A stage given to `start` or a mission must be a stage name (STAGE_PATTERN), whoever sends it. */
export function requireStageName(stage: string | null): void {
  if (stage !== null && !STAGE_PATTERN.test(stage))
    throw new DomainError(
      "invalid_settings",
      `The stage must be ${STAGE_EXPECTED}; received ${JSON.stringify(stage)}.`,
      {
        stage,
      },
    );
}

export function startProject(draft: Draft, command: CommandOf<"start-project">): ApplyResult {
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
  return draft.result("applied");
}

export function importTasks(draft: Draft, command: CommandOf<"import-tasks">): ApplyResult {
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
  return draft.result("applied");
}
