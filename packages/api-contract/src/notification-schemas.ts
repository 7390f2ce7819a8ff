import { NOTIFICATION_SEVERITIES, type NOTIFICATION_TYPES } from "@overseer/domain";
import { z } from "./openapi-zod.ts";

/**
 * The outbound webhook payload (README "Intake and notifications"), version 1. Sent as the body
 * of a Standard Webhooks POST (`webhook-id`, `webhook-timestamp`, `webhook-signature`); listed
 * in the OpenAPI document's `webhooks` section, one entry per type. A receiver dedupes by the
 * `webhook-id` header: every attempt of one delivery carries the same id.
 */
export const WEBHOOK_PAYLOAD_VERSION = 1;

const common = {
  version: z.literal(WEBHOOK_PAYLOAD_VERSION).openapi({ description: "The payload schema's version." }),
  timestamp: z.string().openapi({ description: "When the event was recorded (ISO 8601)." }),
};

const subject = {
  project_id: z.string(),
  task_id: z.string().nullable(),
  event_id: z
    .string()
    .openapi({ description: "The event's id in the project's event log (GET /api/v1/events)." }),
  severity: z.enum(NOTIFICATION_SEVERITIES),
  url: z
    .string()
    .nullable()
    .openapi({ description: "The dashboard page of the project or task; null without OVERSEER_URL." }),
};

const DecisionOptionPayload = z.object({
  id: z.string(),
  label: z.string(),
  description: z.string(),
  requires_note: z.boolean(),
});

const payload = <T extends (typeof NOTIFICATION_TYPES)[number], S extends z.ZodRawShape>(type: T, data: S) =>
  z
    .object({ type: z.literal(type), ...common, data: z.object({ ...subject, ...data }) })
    .openapi(`WebhookPayload_${type.replace(".", "_")}`, { description: `The \`${type}\` notification.` });

export const WebhookDecisionOpenedSchema = payload("decision.opened", {
  decision_id: z.string(),
  revision: z.number().int(),
  title: z.string(),
  reason: z.string(),
  question: z.string(),
  options: z.array(DecisionOptionPayload),
});
export const WebhookDecisionResolvedSchema = payload("decision.resolved", {
  decision_id: z.string(),
  option_id: z.string(),
  resolution_id: z.string(),
  by: z.string(),
});
export const WebhookIncidentSchema = payload("incident.recorded", { kind: z.string(), message: z.string() });
export const WebhookProjectPausedSchema = payload("project.paused", {
  bound: z.enum(["budget", "sessions", "rounds"]),
  reason: z.string(),
});
export const WebhookMissionCompletedSchema = payload("mission.completed", {
  evidence: z.array(z.unknown()),
  reviewer: z.string().nullable(),
});
export const WebhookPullRequestOpenedSchema = payload("pr.opened", {
  number: z.number().int(),
  pull_request_url: z.string(),
  head_sha: z.string().nullable(),
});
export const WebhookPullRequestMergedSchema = payload("pr.merged", {
  number: z.number().int().nullable(),
  merge_commit_sha: z.string(),
  merged_by: z.string().nullable(),
});

/** The type of the message `POST …/subscriptions/{subscription_id}/test` sends (never queued). */
export const WEBHOOK_TEST_TYPE = "overseer.test";

export const WebhookTestSchema = z
  .object({
    type: z.literal(WEBHOOK_TEST_TYPE),
    ...common,
    data: z.object({
      subscription_id: z.string(),
      project_id: z
        .string()
        .nullable()
        .openapi({ description: "The subscription's project; null: every project." }),
      message: z.string(),
    }),
  })
  .openapi("WebhookPayload_overseer_test", {
    description: "A test message an operator sent (`overseer notify test`); no event behind it.",
  });

/** Every payload, told apart by `type`. */
export const WebhookPayloadSchema = z.discriminatedUnion("type", [
  WebhookDecisionOpenedSchema,
  WebhookDecisionResolvedSchema,
  WebhookIncidentSchema,
  WebhookProjectPausedSchema,
  WebhookMissionCompletedSchema,
  WebhookPullRequestOpenedSchema,
  WebhookPullRequestMergedSchema,
  WebhookTestSchema,
]);
export type WebhookPayload = z.infer<typeof WebhookPayloadSchema>;

/** The payload schema of each notification type (the OpenAPI `webhooks` entries). */
export const WEBHOOK_PAYLOAD_SCHEMAS = {
  "decision.opened": WebhookDecisionOpenedSchema,
  "decision.resolved": WebhookDecisionResolvedSchema,
  "incident.recorded": WebhookIncidentSchema,
  "project.paused": WebhookProjectPausedSchema,
  "mission.completed": WebhookMissionCompletedSchema,
  "pr.opened": WebhookPullRequestOpenedSchema,
  "pr.merged": WebhookPullRequestMergedSchema,
} as const satisfies Record<(typeof NOTIFICATION_TYPES)[number], z.ZodType>;

/** Every payload a receiver can get, by type: the notifications and the test message. */
export const WEBHOOK_DOCUMENTED_PAYLOADS = {
  ...WEBHOOK_PAYLOAD_SCHEMAS,
  [WEBHOOK_TEST_TYPE]: WebhookTestSchema,
} as const;
