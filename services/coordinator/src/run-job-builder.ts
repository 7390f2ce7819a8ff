import type { MissionEvidence, ProjectRow } from "@overseer/db";
import {
  type ProjectState,
  pullRequestBase,
  pullRequestBranch,
  type Run,
  taskBranch,
} from "@overseer/domain";
import { renderRunPrompt } from "@overseer/harness";
import { commandForRole, exemptGlobsFor, resolvePrice } from "@overseer/project-config";
import { RUN_JOB_VERSION, type RunJob } from "@overseer/run-contract";
import type { ProjectPolicy } from "./project-policy.ts";

export type JobBuild =
  | { ok: true; job: RunJob }
  | { ok: false; reason: "harness_not_configured" | "configuration_error"; message: string };

/**
 * Everything a stateless worker needs for one run, resolved here so the worker never reads
 * Postgres: the rendered prompt (bounded by max_prompt_chars), the harness argv for the
 * role and action, secrets, limits, scope, hooks and placed files.
 */
export function buildRunJob(
  project: ProjectRow,
  /** The project's policy (the parsed runner config), parsed once per project version. */
  policy: ProjectPolicy,
  state: ProjectState,
  run: Run,
  actionRunNumber: number,
  now = Date.now(),
  /** Evidence of the project's mission (planning tasks only). */
  evidence: MissionEvidence | null = null,
): JobBuild {
  const config = policy.runnerConfig;
  const task = state.tasks.get(run.taskId);
  if (!task) return { ok: false, reason: "configuration_error", message: `Task ${run.taskId} is missing.` };
  const argv = commandForRole(config, task.role, run.action);
  if (argv.length === 0) {
    return {
      ok: false,
      reason: "harness_not_configured",
      message: `No harness command for role "${task.role}" (${run.action}) in project ${project.id}: set "argv" or "commands_by_role.${run.action === "review" ? "reviewer" : task.role}" in its runner config.`,
    };
  }
  // pull_request mode: work builds on (and its pull request targets) a stacked prerequisite's
  // PR branch while that one is open, else the landing branch (domain rule 19).
  const pullRequestMode = policy.landing.mode === "pull_request" && task.kind !== "plan";
  const landing = pullRequestMode
    ? pullRequestBase(state, task, policy.landing.branch)
    : policy.landing.branch;
  const rendered = renderRunPrompt(
    { id: project.id, objective: project.objective, landingBranch: landing },
    config,
    state,
    task,
    run.action,
    run.agentId,
    actionRunNumber,
    evidence,
  );
  if (!rendered.ok) return { ok: false, reason: "configuration_error", message: rendered.error.message };

  const files: Record<string, string> = {};
  for (const [path, spec] of Object.entries(config.files)) {
    files[path] =
      spec.from_secret !== undefined ? (config.secrets[spec.from_secret] ?? "") : (spec.content ?? "");
  }
  const secretValues = Object.values(config.secrets);
  const secondsToMs = (s: number) => Math.max(1, Math.round(s * 1000));
  return {
    ok: true,
    job: {
      v: RUN_JOB_VERSION,
      kind: "run",
      runId: run.id,
      projectId: project.id,
      taskId: task.id,
      agentId: run.agentId,
      action: run.action,
      role: task.role,
      attempt: actionRunNumber,
      pool: config.pool,
      repo: project.repo,
      mainBranch: project.branch,
      landingBranch: landing,
      taskBranch: taskBranch(task.id),
      expectedTaskHead: task.branchHead,
      executorAgentId: run.action === "review" ? task.executorAgentId : null,
      prompt: rendered.prompt,
      argv: [...argv],
      env: { ...config.env, ...config.secrets },
      envAllow: [...config.env_allow],
      secretValues,
      timeoutMs: secondsToMs(config.timeout_seconds),
      idleTimeoutMs: config.idle_timeout_seconds > 0 ? secondsToMs(config.idle_timeout_seconds) : 0,
      scope: [...task.scope],
      metadataGlobs: exemptGlobsFor(config),
      gitCommits: config.git_commits,
      author: { name: config.git.author_name, email: config.git.author_email },
      hooks: {
        setup: config.hooks.setup
          ? { argv: [...config.hooks.setup.argv], timeoutMs: secondsToMs(config.hooks.setup.timeout_seconds) }
          : undefined,
        afterRun: config.hooks.after_run
          ? {
              argv: [...config.hooks.after_run.argv],
              timeoutMs: secondsToMs(config.hooks.after_run.timeout_seconds),
            }
          : undefined,
      },
      files,
      sandbox: {
        driver: config.sandbox.driver,
        pidsMax: config.sandbox.pids_max,
        memoryMb: config.sandbox.memory_mb,
        cpuSeconds: config.sandbox.cpu_seconds,
        diskMb: config.sandbox.disk_mb,
        networkAllowHosts: [...config.network_allow_hosts],
        ...(config.sandbox.image === undefined ? {} : { image: config.sandbox.image }),
      },
      enqueuedAt: now,
      createdAt: run.createdAt,
      agent: config.agent,
      price: resolvePrice(config),
      transitionLingerMs: Math.round(config.transition_linger_seconds * 1000),
      readOnlyPaths: [...config.sandbox.read_only_paths],
      landing: {
        strategy: policy.landing.strategy,
        ...(pullRequestMode ? { viaPullRequests: true as const } : {}),
        ...(pullRequestMode && run.action === "review"
          ? { pullRequestBranch: pullRequestBranch(task.id) }
          : {}),
        check: config.landing.check_command
          ? {
              argv: [...config.landing.check_command.argv],
              timeoutMs: secondsToMs(config.landing.check_command.timeout_seconds),
            }
          : undefined,
      },
      mergeMain:
        run.action !== "review" && task.landing !== null
          ? { reason: task.landing.reason, files: [...task.landing.files] }
          : null,
    },
  };
}
