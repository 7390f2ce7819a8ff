import type { z } from "@hono/zod-openapi";
import type {
  ActiveRunSchema,
  DecisionCardSchema,
  EventSchema,
  IncidentSchema,
  MissionSchema,
  ProjectSchema,
  RunEnvironmentSchema,
  RunSchema,
  RunSummarySchema,
  TaskPullRequestSchema,
  TaskSchema,
  TokenSchema,
  WorkerSchema,
} from "@overseer/api-contract";
import type {
  ActiveRunSummary,
  EventRow,
  IncidentRow,
  NumberedRunRow,
  ProjectRow,
  RunRow,
} from "@overseer/db";
import {
  type Decision,
  formatSpend,
  landingBranch,
  landingHint,
  type MissionState,
  type MissionSummary,
  roundUsd,
  type Task,
  type TaskPullRequest,
} from "@overseer/domain";
import type { WorkerHeartbeat } from "@overseer/queue";
import { pullRequestPolicyView } from "./pull-request-policy-view.ts";

/** Row and domain objects → API shapes (snake_case, ISO times, bigints as numbers). */

/** A time as the API writes it (ISO 8601, UTC). */
export const iso = (d: Date | string | number): string => new Date(d).toISOString();
/** `iso`, with no time (null, undefined) staying null. */
export const isoOrNull = (d: Date | string | number | null | undefined): string | null =>
  d === null || d === undefined ? null : iso(d);

export function decisionCard(d: Decision): z.infer<typeof DecisionCardSchema> {
  return {
    id: d.id,
    item_id: d.itemId,
    revision: d.revision,
    status: d.status,
    title: d.title,
    reason: d.reason,
    question: d.question,
    evidence: d.evidence.map((e) => ({ label: e.label, path: e.path, summary: e.summary })),
    options: d.options.map((o) => ({
      id: o.id,
      label: o.label,
      description: o.description,
      requires_note: o.requires_note,
    })),
    options_source: d.optionsSource,
    selected_option: d.selectedOption,
    note: d.note,
    resolution_id: d.resolutionId,
    resolved_by: d.resolvedBy,
    created_at: iso(d.createdAt),
    resolved_at: isoOrNull(d.resolvedAt),
  };
}

export function activeRunView(r: ActiveRunSummary): z.infer<typeof ActiveRunSchema> {
  return {
    run_id: r.id,
    task_id: r.taskId,
    agent_id: r.agentId,
    action: r.action as z.infer<typeof ActiveRunSchema>["action"],
    attempt: r.attempt,
    number: r.number,
    status: r.status as z.infer<typeof ActiveRunSchema>["status"],
    worker_id: r.workerId,
    created_at: iso(r.createdAt),
    started_at: isoOrNull(r.startedAt),
  };
}

export function projectView(
  row: ProjectRow,
  runnerConfig?: Record<string, unknown>,
  /** The mission's status (`summarizeMission`), when the caller loaded it. */
  mission?: MissionSummary | null,
): z.infer<typeof ProjectSchema> {
  return {
    id: row.id,
    name: row.name,
    repo: row.repo,
    branch: row.branch,
    ...landingView(row),
    objective: row.objective,
    status: row.status,
    status_reason: row.status_reason,
    continuous: row.continuous,
    concurrency: row.concurrency,
    stage: row.stage,
    sessions_used: row.sessions_used,
    sessions_limit: row.sessions_limit,
    budget_usd: row.budget_usd,
    tokens_in: Number(row.tokens_in),
    tokens_out: Number(row.tokens_out),
    tokens_cached: Number(row.tokens_cached),
    ...spendView(row),
    mission: row.mission ? missionView(row.mission, mission ?? null) : null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    ...(runnerConfig ? { runner_config: runnerConfig } : {}),
  };
}

/**
 * `repo_kind`, `landing_branch` and `landing_hint` of a project (domain `landingBranch`), and
 * how approved work lands there: `landing_mode` and the pull request policy.
 */
export function landingView(row: Pick<ProjectRow, "repo_kind" | "branch" | "runner_config">) {
  const project = { repoKind: row.repo_kind, branch: row.branch };
  return {
    repo_kind: row.repo_kind,
    landing_branch: landingBranch(project),
    landing_hint: landingHint(project),
    ...pullRequestPolicyView(row.runner_config),
  };
}

export function taskView(t: Task): z.infer<typeof TaskSchema> {
  return {
    id: t.id,
    project_id: t.projectId,
    stage: t.stage,
    title: t.title,
    body: t.body,
    role: t.role,
    scope: [...t.scope],
    prerequisites: [...t.prerequisites],
    acceptance: [...t.acceptance],
    priority: t.priority,
    kind: t.kind,
    parent_id: t.parentId,
    root_id: t.rootId,
    depth: t.depth,
    status: t.status,
    status_reason: t.statusReason,
    awaiting_reason: t.awaitingReason,
    blocked_by: t.blockedBy,
    return_to: t.returnTo,
    feedback: t.feedback,
    answers: t.answers.map((a) => ({ question: a.question, answer: a.answer, by: a.by, at: iso(a.at) })),
    executor_agent_id: t.executorAgentId,
    branch_head: t.branchHead,
    landing: t.landing === null ? null : { reason: t.landing.reason, files: [...t.landing.files] },
    pull_request: pullRequestView(t.pullRequest),
    failures: t.failures,
    not_before: isoOrNull(t.notBefore),
    version: t.version,
  };
}

export function pullRequestView(pr: TaskPullRequest | null): z.infer<typeof TaskPullRequestSchema> | null {
  if (pr === null) return null;
  return {
    number: pr.number,
    url: pr.url,
    branch: pr.branch,
    base: pr.base,
    head_sha: pr.headSha,
    status: pr.status,
    checks: pr.checks,
    review: pr.review,
    approvals: pr.approvals,
    ci_failures: pr.ciFailures,
    merge_commit_sha: pr.mergeCommitSha,
    merged_by: pr.mergedBy,
  };
}

type RunSummaryRow = { number: number } & Pick<
  RunRow,
  | "id"
  | "project_id"
  | "task_id"
  | "agent_id"
  | "action"
  | "attempt"
  | "status"
  | "transition"
  | "failure"
  | "worker_id"
  | "exit_code"
  | "signal"
  | "timed_out"
  | "duration_ms"
  | "prompt_chars"
  | "scope_violations"
  | "commit_sha"
  | "tokens_in"
  | "tokens_out"
  | "tokens_cached"
  | "cost_usd"
  | "tokens_unpriced"
  | "usage_source"
  | "image_digest"
  | "sandbox_driver"
  | "created_at"
  | "started_at"
  | "ended_at"
>;

export function runSummaryView(r: RunSummaryRow): z.infer<typeof RunSummarySchema> {
  return {
    id: r.id,
    project_id: r.project_id,
    task_id: r.task_id,
    agent_id: r.agent_id,
    action: r.action,
    attempt: r.attempt,
    number: r.number,
    status: r.status,
    transition: r.transition,
    failure: r.failure,
    worker_id: r.worker_id,
    exit_code: r.exit_code,
    signal: r.signal,
    timed_out: r.timed_out,
    duration_ms: r.duration_ms,
    prompt_chars: r.prompt_chars,
    scope_violations: [...r.scope_violations],
    commit_sha: r.commit_sha,
    tokens_in: Number(r.tokens_in),
    tokens_out: Number(r.tokens_out),
    tokens_cached: Number(r.tokens_cached),
    ...spendView(r),
    usage_source: r.usage_source,
    image_digest: r.image_digest,
    sandbox_driver: r.sandbox_driver,
    created_at: iso(r.created_at),
    started_at: isoOrNull(r.started_at),
    ended_at: isoOrNull(r.ended_at),
  };
}

export function runView(r: NumberedRunRow, redact: (text: string) => string): z.infer<typeof RunSchema> {
  return {
    ...runSummaryView(r),
    output: r.output === null ? null : redact(r.output),
    output_truncated: r.output_truncated,
    phases: r.phases.map((p) => ({
      name: p.name,
      started_at: new Date(p.startedAt).toISOString(),
      duration_ms: p.durationMs,
    })),
    environment: runEnvironmentView(r.environment),
  };
}

/** The stored run environment (run-contract `RunEnvironment`, written by the coordinator) in the API's snake_case. */
function runEnvironmentView(
  stored: Record<string, unknown> | null,
): z.infer<typeof RunEnvironmentSchema> | null {
  if (stored === null || typeof stored !== "object") return null;
  const text = (value: unknown) => (typeof value === "string" ? value : null);
  const file = stored.file as { path?: unknown; blob?: unknown } | null | undefined;
  const from = stored.imageFrom;
  return {
    file:
      file && typeof file.path === "string" && typeof file.blob === "string"
        ? { path: file.path, blob: file.blob }
        : null,
    image: text(stored.image),
    image_from: from === "runner_config" || from === "environment_file" ? from : null,
    ignored_image: text(stored.ignoredImage),
    setup_commands: typeof stored.setupCommands === "number" ? stored.setupCommands : 0,
    agent_package: text(stored.agentPackage),
  };
}

export function eventView(e: EventRow): z.infer<typeof EventSchema> {
  return {
    id: String(e.id),
    project_id: e.project_id,
    task_id: e.task_id,
    run_id: e.run_id,
    type: e.type,
    data: e.data,
    created_at: iso(e.created_at),
  };
}

export function incidentView(i: IncidentRow): z.infer<typeof IncidentSchema> {
  return {
    id: String(i.id),
    project_id: i.project_id,
    task_id: i.task_id,
    run_id: i.run_id,
    kind: i.kind,
    message: i.message,
    details: i.details,
    created_at: iso(i.created_at),
  };
}

export function workerView(w: WorkerHeartbeat): z.infer<typeof WorkerSchema> {
  return {
    id: w.id,
    host: w.host,
    pid: w.pid,
    slots: w.slots,
    pools: [...w.pools],
    draining: w.draining,
    sandbox: w.sandbox,
    unsafe: w.unsafe,
    current_jobs: (w.currentJobs ?? []).map((j) => ({
      run_id: j.runId,
      project_id: j.projectId,
      task_id: j.taskId,
      action: j.action,
      since: iso(j.since),
    })),
    started_at: iso(w.startedAt),
    heartbeat_at: iso(w.heartbeatAt),
  };
}

export function tokenView(t: {
  id: string;
  name: string;
  scope: "read" | "operate" | "admin";
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}): z.infer<typeof TokenSchema> {
  return {
    id: t.id,
    name: t.name,
    scope: t.scope,
    created_at: iso(t.created_at),
    revoked_at: isoOrNull(t.revoked_at),
    last_used_at: isoOrNull(t.last_used_at),
  };
}

/** The mission as every surface shows it; with `summary`, its status too (one computation: summarizeMission). */
export function missionView(
  mission: MissionState,
  summary: MissionSummary | null,
): z.infer<typeof MissionSchema> {
  const base = {
    objective: mission.objective,
    stage: mission.stage,
    round: mission.round,
    max_rounds: mission.maxRounds,
    evidence: mission.evidence,
    completed_at: isoOrNull(mission.completedAt),
  };
  if (!summary) return base;
  const sp = summary.spend;
  return {
    ...base,
    state: summary.state,
    tasks: { ...summary.tasks },
    spend: {
      ...spendView({ cost_usd: sp.costUsd, tokens_unpriced: sp.tokensUnpriced }),
      budget_usd: sp.budgetUsd,
      tokens_in: sp.tokensIn,
      tokens_cached: sp.tokensCached,
      tokens_out: sp.tokensOut,
      sessions_used: sp.sessionsUsed,
      sessions_limit: sp.sessionsLimit,
    },
    last_evidence: summary.evidence
      ? {
          kind: summary.evidence.kind,
          text: summary.evidence.text,
          task_id: summary.evidence.taskId,
          at: isoOrNull(summary.evidence.at),
        }
      : null,
    bound: summary.bound
      ? { bound: summary.bound.bound, reason: summary.bound.reason, at: iso(summary.bound.at) }
      : null,
  };
}

/**
 * A stored spend as the API gives it: `cost_usd` rounded to a millionth of a dollar (storage
 * keeps it exact), the tokens nothing priced, and `cost` for people, which says "unpriced"
 * rather than $0 (formatSpend).
 */
export function spendView(row: { cost_usd: number | string; tokens_unpriced: number | string | bigint }): {
  cost_usd: number;
  tokens_unpriced: number;
  cost: string;
} {
  const cost = Number(row.cost_usd);
  const unpriced = Number(row.tokens_unpriced);
  return { cost_usd: roundUsd(cost), tokens_unpriced: unpriced, cost: formatSpend(cost, unpriced) };
}
