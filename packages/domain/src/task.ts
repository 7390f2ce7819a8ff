import type { Proposal } from "./mission.ts";
import type { TaskPullRequest } from "./pull-request.ts";
import type { TaskCardInput } from "./task-card.ts";

/**
 * Task (card) model. A task moves through
 *
 *   todo → in_progress → review → done
 *
 * (in `landing.mode: pull_request`: review → pr_open → done once its pull request merged),
 * with side states `blocked` (waiting for its resolver), `awaiting_input` (waiting for an
 * operator), and `cancelled`. `done` and `cancelled` are terminal.
 */
export const TASK_STATUSES = [
  "todo",
  "in_progress",
  "review",
  /** Approved, its pull request open; `done` only when merged (pull-request.ts). */
  "pr_open",
  "done",
  "blocked",
  "awaiting_input",
  "cancelled",
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** `plan`: a mission's planning round (see mission.ts). */
export const TASK_KINDS = ["work", "resolver", "plan"] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** Why a task waits for an operator (docs/state-machine.md rule 7). */
export const AWAITING_REASONS = [
  "credentials",
  "payment",
  "product_question",
  "external_admin",
  "blocker_limit",
  "scope_violation",
  "harness_not_configured",
  "configuration_error",
  /** A mission's reviewed plan waits for the operator (`plan_approval: operator`). */
  "plan_approval",
  "other",
] as const;
export type AwaitingReason = (typeof AWAITING_REASONS)[number];

/**
 * Why approved work did not land (docs/state-machine.md rule 3): a real conflict with the main
 * branch (`files` hold the conflicting paths), or the project's check command failed on the
 * integrated tree. The next executor starts from the task branch with the main branch merged in.
 */
export const LANDING_FAILURE_REASONS = ["conflict", "check_failed"] as const;
export type LandingFailureReason = (typeof LANDING_FAILURE_REASONS)[number];

export interface LandingFailure {
  readonly reason: LandingFailureReason;
  /** The conflicting files (empty for a failed check). */
  readonly files: readonly string[];
}

export interface OperatorAnswer {
  question: string;
  answer: string;
  by: string;
  at: number;
}

/** A task: its card (id, stage, title, body, role, scope, prerequisites, acceptance, priority) and its state. */
export interface Task extends TaskCardInput {
  readonly projectId: string;
  readonly kind: TaskKind;
  /** For resolvers: the task whose blocker this resolver works on. */
  readonly parentId: string | null;
  /** For resolvers: the ordinary task at the top of the blocker chain. */
  readonly rootId: string | null;
  /** 0 for ordinary tasks, parent depth + 1 for resolvers. */
  readonly depth: number;
  readonly status: TaskStatus;
  /** Why the task is blocked or awaiting input, in words. */
  readonly statusReason: string | null;
  readonly awaitingReason: AwaitingReason | null;
  /** For a blocked task: the resolver whose `done` unblocks it. */
  readonly blockedBy: string | null;
  /** Where a blocked or awaiting task returns once released: `review` if it left from review. */
  readonly returnTo: "todo" | "review" | null;
  /** Agent ids that escalated this task; retired, never reused (rule 5). */
  readonly retiredAgentIds: readonly string[];
  /** Reviewer feedback or handoff for the next run. */
  readonly feedback: string | null;
  readonly answers: readonly OperatorAnswer[];
  /** Agent id of the executor whose work is under review; a reviewer must differ. */
  readonly executorAgentId: string | null;
  /** Head of `overseer/task/<id>` after the last submit; the reviewer's checkout. */
  readonly branchHead: string | null;
  /** Planning tasks: what the last planning run proposed, kept for its review. */
  readonly proposal: Proposal | null;
  /**
   * The last approved landing that failed, until the next submit: its executor starts from the
   * task branch with the main branch merged in (conflict markers committed in `files`).
   */
  readonly landing: LandingFailure | null;
  /**
   * Failed landings in a row (a submit does not reset it; done, or an operator's release after
   * the limit, does). At the project's `attempts` the task waits for an operator instead.
   */
  readonly landingFailures: number;
  /** The task's pull request (landing.mode pull_request); null when it never had one. */
  readonly pullRequest: TaskPullRequest | null;
  /** Consecutive failed runs (no transition, crash) of the current action. */
  readonly failures: number;
  /** Not runnable before this epoch-ms (retry backoff). */
  readonly notBefore: number | null;
  /** Optimistic-concurrency version, bumped by every persisted change. */
  readonly version: number;
}

export const TERMINAL_TASK_STATUSES: ReadonlySet<TaskStatus> = new Set(["done", "cancelled"]);

/** Branch that carries a task's work until it lands. */
export function taskBranch(taskId: string): string {
  return `overseer/task/${taskId}`;
}

/**
 * Branch of a task's pull request: it receives only approved heads (each a descendant of the
 * previous one), while the task branch keeps unreviewed work.
 */
export function pullRequestBranch(taskId: string): string {
  return `overseer/pr/${taskId}`;
}

/** Branch that keeps an escalated run's unfinished work; never merged. */
export function checkpointBranch(taskId: string, agentId: string): string {
  return `overseer/checkpoint/${taskId}/${agentId}`;
}

/** Card defaults, defined once (task files, the API, the CLI and the domain read them here). */
export const TASK_DEFAULTS = Object.freeze({
  /** Stage of a task whose id has no `S<digits>-` prefix and that names none. */
  stage: "S00",
  /** Role of a task that names none (selects commands_by_role and role_notes). */
  role: "general",
  scope: Object.freeze(["**"]) as readonly string[],
});

/** Defaults for a task created from a card (task file, API or CLI). */
export function newTask(
  fields: Pick<Task, "projectId" | "id" | "title"> & Partial<Omit<Task, "projectId" | "id" | "title">>,
): Task {
  return {
    stage: TASK_DEFAULTS.stage,
    body: "",
    role: TASK_DEFAULTS.role,
    scope: [...TASK_DEFAULTS.scope],
    prerequisites: [],
    acceptance: [],
    priority: 0,
    kind: "work",
    parentId: null,
    rootId: null,
    depth: 0,
    status: "todo",
    statusReason: null,
    awaitingReason: null,
    blockedBy: null,
    returnTo: null,
    retiredAgentIds: [],
    feedback: null,
    answers: [],
    executorAgentId: null,
    branchHead: null,
    proposal: null,
    landing: null,
    landingFailures: 0,
    pullRequest: null,
    failures: 0,
    notBefore: null,
    version: 0,
    ...fields,
  };
}

/** A new task of a project from an imported card (task file, API, CLI or an approved plan). */
export function taskFromCard(projectId: string, card: TaskCardInput): Task {
  return newTask({
    projectId,
    id: card.id,
    title: card.title,
    stage: card.stage,
    body: card.body,
    role: card.role,
    scope: [...card.scope],
    prerequisites: [...card.prerequisites],
    acceptance: [...card.acceptance],
    priority: card.priority,
  });
}
