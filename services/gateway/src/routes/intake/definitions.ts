import {
  IntakeDryRunSchema,
  IntakeSourceCreatedSchema,
  IntakeSourceListSchema,
  IntakeSourceParams,
  IntakeSourceRemovedSchema,
  IntakeSourceSpec,
  IntakeWebhookAcceptedSchema,
  IntakeWebhookParams,
  ProjectParams,
  TrackerUpdateListQuery,
  TrackerUpdateListSchema,
  TrackerUpdateParams,
  TrackerUpdateRedeliveredSchema,
} from "@overseer/api-contract";
import {
  errorResponses,
  jsonBody,
  jsonResponse,
  READ_ERRORS,
  tableRoute,
  WRITE_ERRORS,
} from "../route-kit.ts";

const tags = ["Intake"];

export const listIntakeSourcesRoute = tableRoute("listIntakeSources", {
  method: "get",
  path: "/api/v1/projects/{id}/intake/sources",
  tags,
  summary: "List a project's tracker intake sources: items taken, last poll, last error",
  request: { params: ProjectParams },
  responses: {
    200: jsonResponse(
      IntakeSourceListSchema,
      "Sources, oldest first (secrets are never stored: only the names of the host variables holding them).",
    ),
    ...errorResponses(...READ_ERRORS),
  },
});

export const createIntakeSourceRoute = tableRoute("createIntakeSource", {
  method: "post",
  path: "/api/v1/projects/{id}/intake/sources",
  tags,
  summary: "Subscribe a project to a tracker query (GitHub, GitLab, Linear, Jira)",
  description:
    "A matching issue becomes a task (or starts a mission), once per issue. `token_env` and `webhook_secret_env` name environment variables on the coordinator and gateway hosts; the secrets themselves never pass through the API. The coordinator starts polling the source within its next intake period; the tracker's webhooks go to `webhook_path`.",
  request: { params: ProjectParams, body: jsonBody(IntakeSourceSpec) },
  responses: {
    201: jsonResponse(IntakeSourceCreatedSchema, "Created."),
    ...errorResponses(...WRITE_ERRORS),
  },
});

export const removeIntakeSourceRoute = tableRoute("removeIntakeSource", {
  method: "delete",
  path: "/api/v1/projects/{id}/intake/sources/{source_id}",
  tags,
  summary: "Remove an intake source (its items and deliveries go with it; tasks stay)",
  request: { params: IntakeSourceParams },
  responses: {
    200: jsonResponse(IntakeSourceRemovedSchema, "Removed."),
    ...errorResponses(400, 401, 403, 404, 429),
  },
});

export const testIntakeSourceRoute = tableRoute("testIntakeSource", {
  method: "post",
  path: "/api/v1/projects/{id}/intake/sources/{source_id}/test",
  tags,
  summary: "Dry run: ask the tracker for the matching issues and show what would become tasks",
  description:
    "Reads the tracker with the source's token (from the gateway host's environment) and answers with the task each matching issue would become; nothing is written, here or in the tracker. A tracker that refuses or cannot be reached answers 502 with its error.",
  request: { params: IntakeSourceParams },
  responses: {
    200: jsonResponse(IntakeDryRunSchema, "What a poll would take now."),
    ...errorResponses(400, 401, 403, 404, 429, 502, 503),
  },
});

export const receiveIntakeWebhookRoute = tableRoute("receiveIntakeWebhook", {
  method: "post",
  path: "/api/v1/intake/sources/{source_id}/webhook",
  tags,
  summary: "Receive a tracker webhook delivery for one intake source",
  description:
    "Body: the tracker's payload as sent. The signature is checked with the secret in the gateway host's environment variable the source names (`webhook_secret_env`): GitHub `X-Hub-Signature-256`, GitLab `X-Gitlab-Token`, Linear `Linear-Signature`, Jira `X-Hub-Signature`. A verified delivery is stored once by its delivery id and asks the coordinator to re-read the issue (payloads are never trusted for state). A redelivery answers 200 with `stored: false` and asks for nothing new. A bad signature answers 401 and stores nothing.",
  request: { params: IntakeWebhookParams },
  security: [],
  responses: {
    200: jsonResponse(
      IntakeWebhookAcceptedSchema,
      "Stored (or stored before, or about nothing intake reads).",
    ),
    ...errorResponses(400, 401, 404, 413, 503),
  },
});

export const listTrackerUpdatesRoute = tableRoute("listTrackerUpdates", {
  method: "get",
  path: "/api/v1/intake/updates",
  tags,
  summary: "List tracker updates (two-way status): status, attempts, dead letters",
  description:
    "What Overseer writes back to an intake item's issue (a comment, state and labels per the source's status map, a close on merge), one row per moment, newest first.",
  request: { query: TrackerUpdateListQuery },
  responses: {
    200: jsonResponse(TrackerUpdateListSchema, "Updates, newest first."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const redeliverTrackerUpdateRoute = tableRoute("redeliverTrackerUpdate", {
  method: "post",
  path: "/api/v1/intake/updates/{update_id}/redeliver",
  tags,
  summary: "Write a dead tracker update again (idempotent)",
  description:
    "A dead update becomes pending with its attempts reset and is written again under the same key (its comment is found by its marker, not posted twice); a pending or delivered one is left as it is (`redelivered: false`), so asking twice writes once.",
  request: { params: TrackerUpdateParams },
  responses: {
    200: jsonResponse(TrackerUpdateRedeliveredSchema, "The update after the request."),
    ...errorResponses(400, 401, 403, 404, 429),
  },
});
