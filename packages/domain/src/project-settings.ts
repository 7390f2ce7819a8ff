import { DomainError } from "./domain-error.ts";
import { PROJECT_ID_PATTERN, type ProjectStatus } from "./project-state.ts";

/**
 * What a project's repository is, as seen when it was registered (`overseer init`, POST
 * /api/v1/projects), which decides where approved work lands ({@link landingBranch}):
 * - `remote`: a URL the workers fetch and push (or a path the registering process could not
 *   open; the workers reach it);
 * - `bare`: a local bare repository;
 * - `working_copy`: a local repository with a working tree (the user's own clone). Overseer
 *   never writes to a working tree, so work lands on the integration branch `overseer/<branch>`.
 */
export const REPO_KINDS = ["remote", "bare", "working_copy"] as const;
export type RepoKind = (typeof REPO_KINDS)[number];

/**
 * The branch approved work lands on, and so the branch every checkout, review, merge of the
 * main branch and prompt builds on: the project's branch, or `overseer/<branch>` for a working
 * copy (docs/architecture.md, Git). The one place this is decided.
 */
export function landingBranch(project: { readonly repoKind: RepoKind; readonly branch: string }): string {
  return project.repoKind === "working_copy" ? `overseer/${project.branch}` : project.branch;
}

/**
 * How a user brings the landed work into their own branch, or null when it lands on that
 * branch itself (a one-line hint for `init`, `status`, the API and the dashboard).
 */
export function landingHint(project: {
  readonly repoKind: RepoKind;
  readonly branch: string;
}): string | null {
  const landing = landingBranch(project);
  return landing === project.branch
    ? null
    : `approved work lands on ${landing}; bring it into your branch with \`git merge ${landing}\``;
}

/**
 * What an operator sets on a project (`overseer init`, POST /api/v1/projects), beside the
 * control fields the state machine drives. Creating a project and changing these settings are
 * domain commands like every other state change (`create-project`, `update-project-config`):
 * validated here, applied in one transaction with their event, published live.
 */
export interface ProjectSettings {
  readonly name: string;
  readonly repo: string;
  readonly branch: string;
  /** What the repository was when the project was registered; decides {@link landingBranch}. */
  readonly repoKind: RepoKind;
  readonly objective: string;
  /** The validated runner config (docs/runner-config.md), stored as given. */
  readonly runnerConfig: Readonly<Record<string, unknown>>;
  readonly concurrency: number;
  readonly budgetUsd: number | null;
}

/** A new project: its id, its settings and how it starts (paused unless said otherwise). */
export interface NewProject extends ProjectSettings {
  readonly id: string;
  readonly status: Exclude<ProjectStatus, "completed">;
  readonly continuous: boolean;
}

/** The settings `update-project-config` may change; absent keys keep their value. */
export type ProjectSettingsPatch = Partial<
  Pick<ProjectSettings, "runnerConfig" | "objective" | "concurrency" | "budgetUsd" | "repoKind">
>;

/** Defaults of a new project's settings, defined once. */
export const PROJECT_DEFAULTS = Object.freeze({
  branch: "main",
  repoKind: "remote" as RepoKind,
  objective: "",
  concurrency: 1,
  status: "paused" as const,
  continuous: false,
});

/** Refuses settings no project can run with (a bad id, a concurrency below 1, a negative budget). */
export function checkProjectSettings(settings: ProjectSettingsPatch & { id?: string }): void {
  if (settings.id !== undefined && !PROJECT_ID_PATTERN.test(settings.id)) {
    throw new DomainError(
      "invalid_settings",
      `Project id ${JSON.stringify(settings.id)} must match ${PROJECT_ID_PATTERN} (a lowercase slug).`,
      { projectId: settings.id },
    );
  }
  if (
    settings.concurrency !== undefined &&
    (!Number.isInteger(settings.concurrency) || settings.concurrency < 1)
  ) {
    throw new DomainError(
      "invalid_settings",
      `concurrency must be an integer of at least 1, not ${settings.concurrency}.`,
      { concurrency: settings.concurrency },
    );
  }
  if (
    settings.budgetUsd !== undefined &&
    settings.budgetUsd !== null &&
    !(Number.isFinite(settings.budgetUsd) && settings.budgetUsd >= 0)
  ) {
    throw new DomainError(
      "invalid_settings",
      `budget_usd must be a non-negative number or null, not ${settings.budgetUsd}.`,
      { budgetUsd: settings.budgetUsd },
    );
  }
}

/** The keys a patch changes, in a fixed order (recorded in `project.config_updated`). */
export function changedSettings(patch: ProjectSettingsPatch): string[] {
  const keys: (keyof ProjectSettingsPatch)[] = [
    "runnerConfig",
    "objective",
    "concurrency",
    "budgetUsd",
    "repoKind",
  ];
  return keys.filter((key) => patch[key] !== undefined);
}
