import {
  type AppliedTransition,
  type ApplyOptions,
  type CreateProjectInput,
  type Db,
  newProjectOf,
  type ProjectRow,
  requireProject,
} from "@overseer/db";
import {
  type Command,
  DEFAULT_MISSION_MAX_ROUNDS,
  type ProjectSettingsPatch,
  type TaskCardInput,
} from "@overseer/domain";

/** What the helpers need: the TransitionApplier, or a caller's wrapper around it (gateway metrics). */
export interface CommandApplier {
  readonly db: Db;
  apply(
    projectId: string,
    command: Command,
    options?: Pick<ApplyOptions, "projectStatusIn">,
  ): Promise<AppliedTransition>;
}

/** Where the caller's authority depends on the project's state: the states it may act in. */
interface ProjectStatusGuard {
  /** The transition applies only while the project is in one of them (checked in its transaction). */
  projectStatusIn?: ApplyOptions["projectStatusIn"];
}

export interface StartProjectOptions extends ProjectStatusGuard {
  stage?: string | null | undefined;
  /** Overrides the runner config's max_sessions for this start. */
  maxSessions?: number | null | undefined;
  continuous?: boolean | undefined;
  /** Who started it (recorded in the `project.started` event). Default "operator". */
  by?: string | undefined;
}

/** The session budget of a start: `maxSessions` when given, else the runner config's `max_sessions`, else unbounded. */
async function sessionsLimitOf(
  applier: CommandApplier,
  projectId: string,
  maxSessions: number | null | undefined,
): Promise<number | null> {
  const project = await requireProject(applier.db, projectId);
  const configured = (project.runner_config as { max_sessions?: unknown }).max_sessions;
  return maxSessions ?? (typeof configured === "number" ? configured : null);
}

/**
 * Starts a project (rule 12 in docs): active with a fresh session budget, limited to
 * `max_sessions` of this start (the option, else the runner config's, else unbounded).
 */
export async function startProject(
  applier: CommandApplier,
  projectId: string,
  options: StartProjectOptions = {},
): Promise<AppliedTransition> {
  const sessionsLimit = await sessionsLimitOf(applier, projectId, options.maxSessions);
  return applier.apply(
    projectId,
    {
      kind: "start-project",
      by: options.by ?? "operator",
      stage: options.stage ?? null,
      sessionsLimit,
      continuous: options.continuous,
    },
    guardOf(options),
  );
}

/** Imports a validated task graph (all cards or none); returns how many tasks were created. */
export async function importTasks(
  applier: CommandApplier,
  projectId: string,
  tasks: readonly TaskCardInput[],
  by = "operator",
): Promise<number> {
  if (tasks.length === 0) return 0;
  await applier.apply(projectId, { kind: "import-tasks", tasks, by });
  return tasks.length;
}

export interface StartMissionOptions extends ProjectStatusGuard {
  objective: string;
  /** Stage the planner starts from; null = the planner chooses. */
  stage?: string | null | undefined;
  /** Overrides the runner config's max_sessions for this mission. */
  maxSessions?: number | null | undefined;
  /** Spend at which scheduling pauses (stored as the project's budget_usd); undefined keeps it. */
  budgetUsd?: number | null | undefined;
  /** Most planning rounds (the first plan is round 1). Default DEFAULT_MISSION_MAX_ROUNDS. */
  maxRounds?: number | undefined;
  by?: string | undefined;
}

/**
 * Starts a mission: the project becomes active and continuous with a fresh session budget and
 * a planning task (MISSION-R<n>) for the objective; the coordinator schedules it at once.
 */
export async function startMission(
  applier: CommandApplier,
  projectId: string,
  options: StartMissionOptions,
): Promise<AppliedTransition> {
  const sessionsLimit = await sessionsLimitOf(applier, projectId, options.maxSessions);
  return applier.apply(
    projectId,
    {
      kind: "start-mission",
      objective: options.objective,
      stage: options.stage ?? null,
      sessionsLimit,
      maxRounds: options.maxRounds ?? DEFAULT_MISSION_MAX_ROUNDS,
      budgetUsd: options.budgetUsd,
      by: options.by ?? "operator",
    },
    guardOf(options),
  );
}

function guardOf(options: ProjectStatusGuard): Pick<ApplyOptions, "projectStatusIn"> {
  return options.projectStatusIn ? { projectStatusIn: options.projectStatusIn } : {};
}

/**
 * Registers a project through the `create-project` command: one transaction with its
 * `project.created` event and a NOTIFY, then published live. An existing id is refused
 * (DomainError `already_exists`). Returns the stored row.
 */
export async function createProject(
  applier: CommandApplier,
  input: CreateProjectInput,
  by = "operator",
): Promise<ProjectRow> {
  await applier.apply(input.id, { kind: "create-project", project: newProjectOf(input), by });
  return requireProject(applier.db, input.id);
}

/**
 * Changes a project's operator settings through the `update-project-config` command (event
 * `project.config_updated` naming the changed keys). Absent keys keep their value.
 */
export async function updateProjectConfig(
  applier: CommandApplier,
  projectId: string,
  patch: ProjectSettingsPatch,
  by = "operator",
): Promise<ProjectRow> {
  await applier.apply(projectId, { kind: "update-project-config", patch, by });
  return requireProject(applier.db, projectId);
}
