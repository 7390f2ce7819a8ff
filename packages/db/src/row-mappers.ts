import {
  type AwaitingReason,
  type Decision,
  landingBranch,
  type OperatorAnswer,
  type ProjectControl,
  type Run,
  type Task,
  type TaskPullRequest,
} from "@overseer/domain";
import { json } from "./connection.ts";
import type { DecisionRow, ProjectRow, RunRow, TaskRow } from "./database-schema.ts";

const ms = (d: Date | null): number | null => (d ? d.getTime() : null);

/** The branch a project's approved work lands on (domain `landingBranch` of the row). */
export function landingBranchOf(row: Pick<ProjectRow, "repo_kind" | "branch">): string {
  return landingBranch({ repoKind: row.repo_kind, branch: row.branch });
}

/** A task from its row, its prerequisites and its pull request (`pull_requests`, null when none). */
export function taskFromRow(
  row: TaskRow,
  prerequisites: readonly string[],
  pullRequest: TaskPullRequest | null,
): Task {
  return {
    projectId: row.project_id,
    id: row.id,
    stage: row.stage,
    title: row.title,
    body: row.body,
    role: row.role,
    scope: row.scope,
    prerequisites,
    acceptance: row.acceptance,
    priority: row.priority,
    kind: row.kind,
    parentId: row.parent_id,
    rootId: row.root_id,
    depth: row.depth,
    status: row.status as Task["status"],
    statusReason: row.status_reason,
    awaitingReason: row.awaiting_reason as AwaitingReason | null,
    blockedBy: row.blocked_by,
    returnTo: row.return_to as Task["returnTo"],
    retiredAgentIds: row.retired_agent_ids,
    feedback: row.feedback,
    answers: row.answers as OperatorAnswer[],
    executorAgentId: row.executor_agent_id,
    branchHead: row.branch_head,
    proposal: row.proposal ?? null,
    landing: row.landing ?? null,
    landingFailures: row.landing_failures,
    pullRequest,
    failures: row.failures,
    notBefore: ms(row.not_before),
    version: row.version,
  };
}

/** Columns a transition may change on a task (identity and card fields never change). */
export function taskMutableColumns(task: Task) {
  return {
    status: task.status,
    status_reason: task.statusReason,
    awaiting_reason: task.awaitingReason,
    blocked_by: task.blockedBy,
    return_to: task.returnTo,
    retired_agent_ids: [...task.retiredAgentIds],
    feedback: task.feedback,
    executor_agent_id: task.executorAgentId,
    branch_head: task.branchHead,
    proposal: task.proposal === null ? null : json(task.proposal),
    landing: task.landing === null ? null : json(task.landing),
    landing_failures: task.landingFailures,
    failures: task.failures,
    not_before: task.notBefore === null ? null : new Date(task.notBefore),
  };
}

export function runFromRow(row: RunRow): Run {
  return {
    id: row.id,
    projectId: row.project_id,
    taskId: row.task_id,
    agentId: row.agent_id,
    action: row.action as Run["action"],
    attempt: row.attempt,
    status: row.status as Run["status"],
    transition: row.transition as Run["transition"],
    failure: row.failure,
    notBefore: ms(row.not_before),
    createdAt: row.created_at.getTime(),
    workerId: row.worker_id,
    startedAt: ms(row.started_at),
  };
}

export function decisionFromRow(row: DecisionRow): Decision {
  return {
    id: row.id,
    projectId: row.project_id,
    itemId: row.item_id,
    revision: row.revision,
    status: row.status,
    title: row.title,
    reason: row.reason,
    question: row.question,
    evidence: row.evidence as Decision["evidence"],
    options: row.options as Decision["options"],
    optionsSource: row.options_source,
    selectedOption: row.selected_option,
    note: row.note,
    resolutionId: row.resolution_id,
    resolvedBy: row.resolved_by,
    createdAt: row.created_at.getTime(),
    resolvedAt: ms(row.resolved_at),
  };
}

/** The columns of a project row the state machine reads (projectControlFromRow). */
export const PROJECT_CONTROL_COLUMNS = [
  "id",
  "status",
  "status_reason",
  "continuous",
  "concurrency",
  "sessions_limit",
  "sessions_used",
  "stage",
  "mission",
  "version",
] as const;
export type ProjectControlColumn = (typeof PROJECT_CONTROL_COLUMNS)[number];

export function projectControlFromRow(row: Pick<ProjectRow, ProjectControlColumn>): ProjectControl {
  return {
    id: row.id,
    status: row.status,
    statusReason: row.status_reason,
    continuous: row.continuous,
    concurrency: row.concurrency,
    sessionsLimit: row.sessions_limit,
    sessionsUsed: row.sessions_used,
    stage: row.stage,
    mission: row.mission ?? null,
    version: row.version,
  };
}
