import { formatSpend, formatUsd } from "./budget.ts";
import type { MissionBound, MissionState } from "./mission.ts";
import type { ProjectStatus } from "./project-state.ts";
import { TASK_STATUSES } from "./task.ts";

/**
 * A mission's status for operators, computed once here and shown by every surface (`overseer
 * status`, the Argus status and snapshot, the native project view, the dashboard, the status
 * text operators poll). Its input is read by `loadMissionSummaryInput` (packages/db).
 */
export interface MissionSummaryInput {
  readonly mission: MissionState;
  readonly projectStatus: ProjectStatus;
  readonly statusReason: string | null;
  /** Tasks of the project by status (statuses without tasks may be absent). */
  readonly counts: Readonly<Record<string, number>>;
  readonly spend: MissionSpend;
  /** The most recently approved task that carried a summary (a stage's summary), if any. */
  readonly lastApproved: {
    readonly taskId: string;
    readonly title: string;
    readonly summary: string;
    readonly at: number;
  } | null;
  /** The latest `mission.bound_reached` of the project, if any. */
  readonly lastBound: { readonly bound: MissionBound; readonly reason: string; readonly at: number } | null;
}

export interface MissionSpend {
  readonly costUsd: number;
  /** Tokens no price covered: shown as unpriced, never as $0. */
  readonly tokensUnpriced: number;
  readonly budgetUsd: number | null;
  /** Input tokens, cached ones included. */
  readonly tokensIn: number;
  readonly tokensCached: number;
  readonly tokensOut: number;
  readonly sessionsUsed: number;
  readonly sessionsLimit: number | null;
}

/**
 * `completed`: the objective was met (evidence approved); `paused_by_bound`: a bound paused it
 * and it has not been restarted since; `paused` / `stopped`: the operator's doing; `running`.
 */
export const MISSION_STATES = ["running", "paused_by_bound", "paused", "stopped", "completed"] as const;
export type MissionStatusState = (typeof MISSION_STATES)[number];

export interface MissionSummary {
  readonly objective: string;
  readonly stage: string | null;
  readonly round: number;
  readonly maxRounds: number;
  readonly state: MissionStatusState;
  readonly completedAt: number | null;
  /** Every task status with its count (zeros included) and `total`. */
  readonly tasks: Readonly<Record<string, number>>;
  readonly spend: MissionSpend;
  /** Last verified evidence: the approved completion evidence, else the last approved stage summary. */
  readonly evidence: {
    readonly kind: "completion" | "stage_summary";
    readonly text: string;
    readonly taskId: string | null;
    readonly at: number | null;
  } | null;
  /** The bound that paused the mission, while it stands paused by it. */
  readonly bound: { readonly bound: MissionBound; readonly reason: string; readonly at: number } | null;
}

export function summarizeMission(input: MissionSummaryInput): MissionSummary {
  const { mission } = input;
  const tasks: Record<string, number> = {};
  let total = 0;
  for (const status of TASK_STATUSES) {
    tasks[status] = input.counts[status] ?? 0;
    total += tasks[status];
  }
  tasks.total = total;
  // The bound's reason is the status reason it set; a restart or another pause replaces it.
  const bound =
    input.projectStatus === "paused" &&
    input.lastBound !== null &&
    input.lastBound.reason === input.statusReason
      ? input.lastBound
      : null;
  const state: MissionStatusState =
    mission.evidence !== null
      ? "completed"
      : bound !== null
        ? "paused_by_bound"
        : input.projectStatus === "paused"
          ? "paused"
          : input.projectStatus === "stopped"
            ? "stopped"
            : "running";
  const evidence: MissionSummary["evidence"] =
    mission.evidence !== null
      ? { kind: "completion", text: mission.evidence, taskId: null, at: mission.completedAt }
      : input.lastApproved !== null
        ? {
            kind: "stage_summary",
            text: input.lastApproved.summary,
            taskId: input.lastApproved.taskId,
            at: input.lastApproved.at,
          }
        : null;
  return {
    objective: mission.objective,
    stage: mission.stage,
    round: mission.round,
    maxRounds: mission.maxRounds,
    state,
    completedAt: mission.completedAt,
    tasks,
    spend: input.spend,
    evidence,
    bound,
  };
}

/**
 * What an operator polling the status must hear about the mission, like `waiting_for_you`:
 * that it completed (with its evidence) or stands paused at a bound (with the bound's summary).
 * Null while it runs or was paused by the operator.
 */
export function missionNotice(s: MissionSummary): string | null {
  if (s.state === "completed")
    return `mission completed: ${oneLine(s.evidence?.kind === "completion" ? s.evidence.text : "objective met", 300)}`;
  if (s.state === "paused_by_bound" && s.bound)
    return `mission paused at the ${s.bound.bound} bound: ${oneLine(s.bound.reason, 300)}`;
  return null;
}

/** The mission's lines in the status text (`overseer status`, the Argus `text`). */
export function missionSummaryLines(s: MissionSummary): string[] {
  const lines = [`mission: ${oneLine(s.objective, 200)}`];
  const state =
    s.state === "completed"
      ? "completed"
      : s.state === "paused_by_bound" && s.bound
        ? `paused by the ${s.bound.bound} bound: ${s.bound.reason}`
        : s.state;
  lines.push(`  round ${s.round} of ${s.maxRounds}${s.stage ? `, stage ${s.stage}` : ""}; ${state}`);
  const counts = TASK_STATUSES.filter((st) => (s.tasks[st] ?? 0) > 0).map((st) => `${s.tasks[st]} ${st}`);
  lines.push(`  tasks: ${counts.length > 0 ? counts.join(", ") : "none"}`);
  const sp = s.spend;
  const budget = sp.budgetUsd === null ? "no budget" : `budget ${formatUsd(sp.budgetUsd)}`;
  const sessions =
    sp.sessionsLimit === null ? `${sp.sessionsUsed}` : `${sp.sessionsUsed} of ${sp.sessionsLimit}`;
  lines.push(
    `  spend: ${formatSpend(sp.costUsd, sp.tokensUnpriced)} (${budget}); tokens ${sp.tokensIn} in (${sp.tokensCached} cached), ${sp.tokensOut} out; sessions ${sessions}`,
  );
  if (s.evidence) {
    const what =
      s.evidence.kind === "completion" ? "completion evidence" : `last approved (${s.evidence.taskId})`;
    lines.push(`  ${what}: ${oneLine(s.evidence.text, 300)}`);
  }
  return lines;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
