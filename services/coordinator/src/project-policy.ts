/**
 * A project's policy: what the coordinator decides runs and results by (retry, plan approval,
 * landing, budgets), parsed once per project version from the stored runner config and shared
 * by the job builder and result application.
 *
 * Every input of a policy (`runner_config`, `budget_usd`, `branch`, `repo_kind`) is written only
 * with the project row's version bump (packages/db transition-repository), so a policy cached
 * under the row's version (and creation time) is the policy of every row read at that version.
 * Most version bumps leave those inputs alone (every claim counts a session, so bumps the
 * version): a row at another version whose inputs are the cached policy's own keeps it, and
 * only a changed input parses again. A stored config that no longer parses is cached as its
 * error, so it is not re-parsed either.
 */
import { landingBranchOf, type ProjectRow } from "@overseer/db";
import type { PlanApproval, RetryPolicy } from "@overseer/domain";
import { ConfigError } from "@overseer/input-errors";
import {
  type ForgeSettings,
  type LandingMode,
  landingSettingsOf,
  type PullRequestSettings,
  parseRunnerConfig,
  type RunnerConfig,
} from "@overseer/project-config";

export interface ProjectPolicy {
  /** The stored runner config, parsed: what the job builder reads beyond the fields below. */
  readonly runnerConfig: RunnerConfig;
  /** `attempts` and `retry_backoff_seconds`: failed runs in a row, and the backoff between them. */
  readonly retry: RetryPolicy;
  /** `plan_approval`: who approves a mission planner's task graph. */
  readonly planApproval: PlanApproval;
  /**
   * Where approved work lands (domain `landingBranch`), how (`landing.strategy`), by a push or
   * a pull request (`landing.mode`), and the pull request settings (`landing.pull_request`,
   * defaults applied; read only in pull_request mode).
   */
  readonly landing: {
    readonly branch: string;
    readonly strategy: RunnerConfig["landing"]["strategy"];
    readonly mode: LandingMode;
    readonly pullRequest: PullRequestSettings;
  };
  /**
   * The project's forge (`forge`; always set in pull_request mode), token included: for the
   * coordinator's host-side forge work only. The run-job builder never copies it into a job.
   */
  readonly forge: ForgeSettings | null;
  /** Spend at which scheduling pauses: the project's `budget_usd`, the config's `budget_tokens`. */
  readonly budgets: { readonly usd: number | null; readonly tokens: number | null };
}

/**
 * Parses a project's policy from its row. A stored config that no longer parses is a
 * `ConfigError` naming the project, the bad fields and the command that replaces it; it never
 * falls back to defaults the operator did not choose.
 */
export function projectPolicyOf(project: ProjectRow): ProjectPolicy {
  const runnerConfig = storedRunnerConfig(project);
  const landing = landingSettingsOf(runnerConfig);
  return {
    runnerConfig,
    retry: { maxAttempts: runnerConfig.attempts, backoffMs: runnerConfig.retry_backoff_seconds * 1000 },
    planApproval: runnerConfig.plan_approval,
    landing: {
      branch: landingBranchOf(project),
      strategy: runnerConfig.landing.strategy,
      mode: landing.mode,
      pullRequest: landing.pullRequest,
    },
    forge: landing.forge,
    budgets: { usd: project.budget_usd, tokens: runnerConfig.budget_tokens },
  };
}

/** What a policy is parsed from, beside the row's version: the same inputs, the same policy. */
type Entry = { version: number; created: number; inputs: string } & (
  | { policy: ProjectPolicy }
  | { error: ConfigError }
);

/**
 * A policy's inputs as one string (Postgres gives `jsonb` keys in one order, so the same
 * config reads the same).
 */
function inputsOf(project: ProjectRow): string {
  return JSON.stringify([project.runner_config, project.budget_usd, project.branch, project.repo_kind]);
}

/** Policies of the projects this coordinator works on, each parsed once per change of its inputs. */
export class ProjectPolicies {
  private readonly cached = new Map<string, Entry>();
  private parses = 0;

  /** The project's policy; throws the `ConfigError` of a stored config that does not parse. */
  of(project: ProjectRow): ProjectPolicy {
    const { version } = project;
    const created = project.created_at.getTime();
    let entry = this.cached.get(project.id);
    if (entry?.version !== version || entry.created !== created) {
      // A project deleted and made again under its id is another project: its creation tells.
      const inputs = inputsOf(project);
      if (entry?.created === created && entry.inputs === inputs) entry = { ...entry, version };
      else {
        this.parses++;
        entry = parsed(project, { version, created, inputs });
      }
      this.cached.set(project.id, entry);
    }
    if ("error" in entry) throw entry.error;
    return entry.policy;
  }

  /** The project's policy, or the `ConfigError` of a stored config that no longer parses. */
  ifValid(project: ProjectRow): { ok: true; policy: ProjectPolicy } | { ok: false; error: ConfigError } {
    try {
      return { ok: true, policy: this.of(project) };
    } catch (error) {
      if (error instanceof ConfigError) return { ok: false, error };
      throw error;
    }
  }

  /**
   * The spend bounds: `budget_usd` and the runner config's `budget_tokens`. A stored config that
   * no longer parses bounds by `budget_usd` only; the run the claim then queues pauses the
   * project on it (run-misconfigured), which is where the operator learns of it.
   */
  budgetsOf(project: ProjectRow): { budgetUsd: number | null; budgetTokens: number | null } {
    const policy = this.ifValid(project);
    return { budgetUsd: project.budget_usd, budgetTokens: policy.ok ? policy.policy.budgets.tokens : null };
  }

  /** Drops a project's policy (its lease was lost: another replica schedules it now). */
  forget(projectId: string): void {
    this.cached.delete(projectId);
  }

  /** Parses so far (every cache miss): what the policy cache saved is observable. */
  get parseCount(): number {
    return this.parses;
  }
}

function parsed(project: ProjectRow, key: { version: number; created: number; inputs: string }): Entry {
  try {
    return { ...key, policy: projectPolicyOf(project) };
  } catch (error) {
    if (error instanceof ConfigError) return { ...key, error };
    throw error;
  }
}

/** The project's stored runner config, parsed; invalid is an error that says how to replace it. */
function storedRunnerConfig(project: ProjectRow): RunnerConfig {
  const source = `runner config of project ${project.id}`;
  try {
    return parseRunnerConfig(project.runner_config, source);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(
      source,
      error.issues,
      `The stored config is invalid; replace it with \`overseer init --project ${project.id} --update --config runner.json\`.`,
    );
  }
}
