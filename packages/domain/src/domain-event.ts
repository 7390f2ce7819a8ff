/** Appended to the `events` table, one row per fact, in the transaction that caused it. */
export interface DomainEvent {
  readonly type: DomainEventType;
  readonly taskId: string | null;
  readonly runId: string | null;
  readonly data: Readonly<Record<string, unknown>>;
}

export type DomainEventType =
  | "run.queued"
  | "run.started"
  | "run.redelivered"
  | "run.finished"
  | "run.failed"
  | "run.cancelled"
  | "task.submitted"
  | "task.approved"
  | "task.rejected"
  | "task.landing_failed"
  | "task.escalated"
  | "task.blocked"
  | "task.unblocked"
  | "task.awaiting_input"
  | "task.released"
  | "task.answered"
  | "task.cancelled"
  | "task.imported"
  | "task.retry_scheduled"
  /** Approved in pull_request mode: the coordinator opens or updates the pull request. */
  | "task.pr_requested"
  | "pr.opened"
  | "pr.checks_passed"
  | "pr.checks_failed"
  | "pr.checks_pending"
  | "pr.changes_requested"
  | "pr.review_updated"
  | "pr.approved"
  | "pr.merged"
  | "pr.closed"
  /** An operator cancelled or stopped a task whose pull request is open: the coordinator closes it. */
  | "pr.close_requested"
  /**
   * A stacked prerequisite merged (or, rule 20, an operator retargeted a pull request whose
   * stacked base was closed): the dependent's pull request now targets another base.
   */
  | "pr.retarget_requested"
  /** Rule 20: the prerequisite a pull request is stacked on was closed unmerged and cancelled: a card asks. */
  | "pr.base_closed"
  | "resolver.created"
  | "decision.created"
  | "decision.resolved"
  | "incident.recorded"
  | "project.created"
  | "project.config_updated"
  | "project.status_changed"
  | "project.started"
  | "project.sessions_exhausted"
  | "mission.started"
  | "mission.plan_invalid"
  | "mission.planned"
  | "mission.plan_awaiting_approval"
  | "mission.plan_rejected"
  | "mission.plan_refused"
  | "mission.continued"
  | "mission.replan_requested"
  | "mission.bound_reached"
  | "mission.completion_refused"
  | "mission.completed";

export type IncidentKind =
  | "scope_violation"
  | "forbidden_transition"
  | "disk_limit"
  | "timeout"
  | "stall"
  | "harness_not_configured"
  | "harness_crash"
  | "result_unapplicable"
  | "configuration_error"
  | "protocol_not_followed";

export interface Incident {
  readonly kind: IncidentKind;
  readonly taskId: string;
  readonly runId: string | null;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
}
