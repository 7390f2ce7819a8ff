import type { Decision } from "../decision.ts";
import type { DomainEvent, Incident } from "../domain-event.ts";
import type { NewProject, ProjectSettingsPatch } from "../project-settings.ts";
import type { ProjectControl, ProjectState } from "../project-state.ts";
import type { Run } from "../run.ts";
import type { Task } from "../task.ts";

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

/**
 * Whether an applied command changed nothing at all (a claim with nothing to claim): no row
 * to write, no event, no incident. Such a command writes nothing and notifies no one.
 */
export function changesNothing(result: ApplyResult): boolean {
  const c = result.changes;
  return (
    c.project === null &&
    c.createdProject === null &&
    c.settings === null &&
    c.tasks.length === 0 &&
    c.runs.length === 0 &&
    c.decisions.length === 0 &&
    result.events.length === 0 &&
    result.incidents.length === 0
  );
}
