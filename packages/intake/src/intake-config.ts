/**
 * What one intake source says beyond its query (README "Intake and notifications"): whether an
 * issue becomes a task or starts a mission, the card defaults, the label prefixes read for scope
 * and role, and the status map written back to the tracker. Validated at the API boundary
 * (`@overseer/api-contract`); here it is plain data for the pure rules.
 */

/** `task`: an issue becomes one task; `mission`: it starts a mission with the issue as objective. */
export const INTAKE_AS = ["task", "mission"] as const;
export type IntakeAs = (typeof INTAKE_AS)[number];

/** The moments of a task the tracker hears about. */
export const STATUS_MOMENTS = ["started", "pr_opened", "done", "blocked", "merged"] as const;
export type StatusMoment = (typeof STATUS_MOMENTS)[number];

/** What one moment does to the issue; an unset field changes nothing. */
export interface StatusMapEntry {
  /** Tracker state name to move to (GitHub/GitLab: "open" | "closed"). */
  readonly state?: string | undefined;
  readonly addLabels?: readonly string[] | undefined;
  readonly removeLabels?: readonly string[] | undefined;
  /** Whether to comment (default true). */
  readonly comment?: boolean | undefined;
}

export type StatusMap = Readonly<Partial<Record<StatusMoment, StatusMapEntry>>>;

export interface IntakeSourceConfig {
  readonly as: IntakeAs;
  /** A label that makes one issue start a mission whatever `as` says (and `taskLabel` the reverse). */
  readonly missionLabel: string;
  readonly taskLabel: string;
  /** Card defaults when no label names them. */
  readonly stage: string;
  readonly role: string;
  readonly scope: readonly string[];
  /** Labels `scope:<glob>` add a scope glob; `role:<name>` sets the role. */
  readonly scopeLabelPrefix: string;
  readonly roleLabelPrefix: string;
  readonly statusMap: StatusMap;
  /** Close the issue when its pull request merges (GitHub/GitLab "closed"; others: `statusMap.merged.state`). */
  readonly closeOnMerge: boolean;
}

/** The defaults a source starts from; an operator overrides any of them. */
export const INTAKE_CONFIG_DEFAULTS: IntakeSourceConfig = Object.freeze({
  as: "task",
  missionLabel: "overseer:mission",
  taskLabel: "overseer:task",
  stage: "S00",
  role: "general",
  scope: Object.freeze(["**"]),
  scopeLabelPrefix: "scope:",
  roleLabelPrefix: "role:",
  statusMap: Object.freeze({
    started: { addLabels: ["overseer:working"] },
    pr_opened: {},
    done: { removeLabels: ["overseer:working"] },
    blocked: { addLabels: ["overseer:blocked"] },
    merged: { removeLabels: ["overseer:working", "overseer:blocked"] },
  }),
  closeOnMerge: true,
}) as IntakeSourceConfig;

/** A config with the defaults filled in for what `partial` leaves unset. */
export function intakeConfigOf(partial: Partial<IntakeSourceConfig> = {}): IntakeSourceConfig {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, value]) => value !== undefined));
  // A status map overrides moment by moment: a moment it leaves out keeps its default.
  const statusMap = { ...INTAKE_CONFIG_DEFAULTS.statusMap, ...(partial.statusMap ?? {}) };
  return { ...INTAKE_CONFIG_DEFAULTS, ...defined, statusMap };
}
