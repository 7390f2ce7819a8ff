import type { TaskCardInput } from "./task-card.ts";

/**
 * Missions: an objective in, a planned backlog, continuation until the objective is met.
 *
 * A mission lives on its project (`ProjectControl.mission`). Its planning work is ordinary
 * tasks of kind `plan` (role `planner`), run and reviewed like any other task:
 *
 *   start-mission        project active + continuous, round 1, planning task MISSION-R1 todo
 *   propose (plan)       planning task in_progress → review with the proposed task graph kept
 *   propose (complete)   planning task in_progress → review with the completion evidence kept
 *   propose (problems)   planning task back to todo, every problem listed as feedback
 *   approve (plan)       planning task done, every proposed card imported, or none (then the
 *                        planning task returns to todo with the reasons)
 *   approve (complete)   project `completed` with the evidence, only with no pending decision
 *                        and no open task (an open incident keeps its task open)
 *   claim                a continuous mission whose tasks are all done/cancelled gets the next
 *                        planning round, or pauses with a summary at its round limit
 *   escalate --replan    a work task is cancelled (its work kept) and a planning round replaces
 *                        it (a resolver or planning task escalates as usual)
 */

/** One card of a proposed task graph, already validated like a task file. */
export type PlanCard = TaskCardInput;

/** What a planning run proposed; reviewed like a submit, applied on approve. */
export type Proposal =
  | { readonly kind: "plan"; readonly tasks: readonly PlanCard[] }
  | { readonly kind: "complete"; readonly evidence: string };

export interface MissionState {
  readonly objective: string;
  /** Stage the planner starts from (`--stage`); null = the planner chooses. */
  readonly stage: string | null;
  /** Planning rounds created so far (the first plan is round 1). */
  readonly round: number;
  /** Most planning rounds; reaching it pauses the project with a summary. */
  readonly maxRounds: number;
  /** Evidence approved by an independent reviewer; set when the project completed. */
  readonly evidence: string | null;
  /** Epoch ms of completion. */
  readonly completedAt: number | null;
}

/** Default bound on planning rounds of one mission (`--max-rounds`). */
export const DEFAULT_MISSION_MAX_ROUNDS = 10;

/** Role of planning tasks; selects `commands_by_role.planner` and `role_notes.planner`. */
export const PLANNER_ROLE = "planner";

/** Id of the planning task of a round. */
export function planTaskId(round: number): string {
  return `MISSION-R${round}`;
}

/**
 * Who approves a planner's task graph (runner config `plan_approval`):
 *   reviewer  the fresh reviewer's approve imports the graph (default)
 *   operator  the reviewer still reviews first; its approve turns the plan into a "Needs you"
 *             decision card listing the proposed tasks, and only the operator's
 *             `approve_plan` imports it (a rejection with feedback sends it back to the planner)
 * Completion evidence is always approved by the reviewer alone.
 */
export const PLAN_APPROVALS = ["reviewer", "operator"] as const;
export type PlanApproval = (typeof PLAN_APPROVALS)[number];
export const DEFAULT_PLAN_APPROVAL: PlanApproval = "reviewer";

/** Options of a plan-approval card (besides `custom`, read as rejection feedback, and `stop`). */
export const APPROVE_PLAN_OPTION_ID = "approve_plan";
export const REJECT_PLAN_OPTION_ID = "reject_plan";

/**
 * Bounds that pause an open mission, each recorded as `mission.bound_reached`
 * `{ bound, reason, summary }` (the reason is also the project's status reason):
 * planning `rounds`, agent `sessions` of the current start, spend over `budget` (budget_usd).
 */
export const MISSION_BOUNDS = ["rounds", "sessions", "budget"] as const;
export type MissionBound = (typeof MISSION_BOUNDS)[number];
