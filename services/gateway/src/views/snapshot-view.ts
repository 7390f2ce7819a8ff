import type { z } from "@hono/zod-openapi";
import { argusTaskStatus, type ProjectStatusSchema, type SnapshotSchema } from "@overseer/api-contract";
import type { Decision, Task } from "@overseer/domain";
import { decisionCard, pullRequestView } from "./resource-views.ts";

/** What a snapshot takes from the project status. */
export type SnapshotStatus = Pick<
  z.infer<typeof ProjectStatusSchema>,
  | "project_id"
  | "status"
  | "status_reason"
  | "objective"
  | "stage"
  | "counts"
  | "pending_questions"
  | "pending_count"
  | "waiting_for_you"
  | "mission"
  | "mission_notice"
  | "generated_at"
  | "running"
>;

/**
 * The Argus snapshot of a project status: `compact` keeps the counts and pending questions;
 * otherwise every task (in the given order) joins the backlog with its pending question and
 * its latest card (`decisions`: the project's cards, one per item, the latest last).
 */
export function snapshotView(
  status: SnapshotStatus,
  compact: boolean,
  tasks: readonly Task[] = [],
  decisions: readonly Decision[] = [],
): z.infer<typeof SnapshotSchema> {
  const base = {
    compact,
    project_id: status.project_id,
    status: status.status,
    status_reason: status.status_reason,
    objective: status.objective,
    stage: status.stage,
    counts: status.counts,
    pending_questions: status.pending_questions,
    pending_count: status.pending_count,
    waiting_for_you: status.waiting_for_you,
    mission: status.mission,
    mission_notice: status.mission_notice,
    generated_at: status.generated_at,
  };
  if (compact) return base;
  const byItem = new Map<string, Decision>(decisions.map((d) => [d.itemId, d]));
  const backlog = tasks.map((t) => {
    const card = byItem.get(t.id) ?? null;
    return {
      id: t.id,
      stage: t.stage,
      title: t.title,
      role: t.role,
      kind: t.kind,
      status: argusTaskStatus(t.status),
      status_reason: t.statusReason,
      awaiting_reason: t.awaitingReason,
      priority: t.priority,
      prerequisites: [...t.prerequisites],
      parent_id: t.parentId,
      root_id: t.rootId,
      depth: t.depth,
      blocked_by: t.blockedBy,
      pending_question: card?.status === "pending" ? card.question : null,
      operator_decision: card ? decisionCard(card) : null,
      pull_request: pullRequestView(t.pullRequest),
    };
  });
  return { ...base, running: status.running, backlog };
}
