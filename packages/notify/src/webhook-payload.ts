import {
  dashboardPageUrl,
  WEBHOOK_PAYLOAD_VERSION,
  WEBHOOK_TEST_TYPE,
  type WebhookPayload,
  WebhookPayloadSchema,
} from "@overseer/api-contract";
import { formatZodIssues } from "@overseer/input-errors";

/** What the outbox holds about one notification (the db row, without the db's types). */
export interface OutboxNotification {
  readonly type: string;
  readonly severity: string;
  readonly project_id: string;
  readonly task_id: string | null;
  readonly event_id: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly created_at: Date;
}

/**
 * The version-1 webhook payload of an outbox row, checked against the contract's schema
 * (`WebhookPayloadSchema`): the domain's event data renamed to the documented snake_case fields.
 * Throws when the row cannot make a valid payload (a bug, never the receiver's fault).
 */
export function webhookPayloadOf(row: OutboxNotification, dashboardUrl: string | null): WebhookPayload {
  const d = row.data;
  const subject = {
    project_id: row.project_id,
    task_id: row.task_id,
    event_id: String(row.event_id),
    severity: row.severity,
    url: dashboardPageUrl(dashboardUrl, row.project_id, row.task_id),
  };
  const candidate = {
    type: row.type,
    version: WEBHOOK_PAYLOAD_VERSION,
    timestamp: row.created_at.toISOString(),
    data: { ...subject, ...detailsOf(row.type, d) },
  };
  const parsed = WebhookPayloadSchema.safeParse(candidate);
  if (!parsed.success)
    throw new Error(
      `outbox row of event ${row.event_id} (${row.type}) makes no valid webhook payload: ${formatZodIssues(parsed.error.issues, candidate)}`,
    );
  return parsed.data;
}

function detailsOf(type: string, d: Readonly<Record<string, unknown>>): Record<string, unknown> {
  switch (type) {
    case "decision.opened":
      return {
        decision_id: d.decisionId,
        revision: d.revision,
        title: d.title,
        reason: d.reason,
        question: d.question,
        options: d.options,
      };
    case "decision.resolved":
      return { decision_id: d.decisionId, option_id: d.optionId, resolution_id: d.resolutionId, by: d.by };
    case "incident.recorded":
      return { kind: d.kind, message: d.message };
    case "project.paused":
      return { bound: d.bound, reason: d.reason };
    case "mission.completed":
      return { evidence: d.evidence ?? [], reviewer: d.reviewer ?? null };
    case "pr.opened":
      return { number: d.number, pull_request_url: d.url, head_sha: d.headSha ?? null };
    case "pr.merged":
      return { number: d.number ?? null, merge_commit_sha: d.mergeCommitSha, merged_by: d.mergedBy ?? null };
    default:
      return {};
  }
}

/** The payload of a subscription's test message (`overseer.test`), checked against the contract. */
export function webhookTestPayload(
  subscriptionId: string,
  projectId: string | null,
  now = new Date(),
): WebhookPayload {
  return WebhookPayloadSchema.parse({
    type: WEBHOOK_TEST_TYPE,
    version: WEBHOOK_PAYLOAD_VERSION,
    timestamp: now.toISOString(),
    data: {
      subscription_id: subscriptionId,
      project_id: projectId,
      message: "A test message from Overseer: this receiver verifies the signature.",
    },
  });
}
