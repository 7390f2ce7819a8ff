import { z } from "@hono/zod-openapi";
import {
  AnswerResultSchema,
  MessageConflictSchema,
  MessageResultSchema,
  ProjectDecisionParams,
  ProjectItemParams,
  ProjectParams,
  ProjectStatusSchema,
  ResolveRequestSchema,
  ResolveResultSchema,
  SnapshotSchema,
  StaleErrorSchema,
  TextRequestSchema,
} from "@overseer/api-contract";
import {
  errorResponses,
  jsonBody,
  jsonResponse,
  READ_ERRORS,
  tableRoute,
  WRITE_ERRORS,
} from "../route-kit.ts";

/**
 * Argus-compatible routes (docs/argus-compatibility.md): operator skills written for
 * Argus poll `status`/`snapshot`, then answer through `resolve`, `answer` or
 * `message`. Paths, field names and response shapes follow Argus; everything else the
 * gateway offers lives under `/api/v1`.
 */

const SnapshotQuery = z.object({
  compact: z
    .enum(["true", "false", "1", "0"], { error: "true or false" })
    .optional()
    .openapi({ description: "true: only counts and pending_questions; otherwise the full backlog too." }),
});

export const getArgusStatusRoute = tableRoute("getArgusStatus", {
  method: "get",
  path: "/api/projects/{id}/status",
  tags: ["Argus"],
  summary: "Project status with pending questions",
  description:
    "Objective, stage, task counts by status, running runs and the pending decision cards. `waiting_for_you` is `waiting for you: N unanswered question(s)` when N > 0: a stop signal for operators.",
  request: { params: ProjectParams },
  responses: {
    200: jsonResponse(ProjectStatusSchema, "Current status."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const getArgusSnapshotRoute = tableRoute("getArgusSnapshot", {
  method: "get",
  path: "/api/projects/{id}/snapshot",
  tags: ["Argus"],
  summary: "Project snapshot (compact or with the full backlog)",
  description:
    "`compact=true`: counts and `pending_questions`. Otherwise also `backlog`: every task with `pending_question` (the pending card's question or null) and `operator_decision` (its latest card).",
  request: { params: ProjectParams, query: SnapshotQuery },
  responses: { 200: jsonResponse(SnapshotSchema, "Snapshot."), ...errorResponses(...READ_ERRORS) },
});

export const resolveDecisionRoute = tableRoute("resolveDecision", {
  method: "post",
  path: "/api/projects/{id}/decisions/{decision_id}/resolve",
  tags: ["Argus"],
  summary: "Resolve a decision card",
  description:
    "Records `option_id` (and `note`) on a pending card and makes its task runnable again (`stop` cancels the item). Resolving again with the same option answers `already_applied` with the same `resolution_id`; another option after resolution answers 409 with `application_status: stale` and changes nothing.",
  request: {
    params: ProjectDecisionParams,
    body: jsonBody(ResolveRequestSchema),
  },
  responses: {
    200: jsonResponse(ResolveResultSchema, "Resolved (or already resolved with the same option)."),
    ...errorResponses(...WRITE_ERRORS),
    409: jsonResponse(
      StaleErrorSchema,
      "Already resolved with another option (stale), or a concurrent change.",
    ),
  },
});

export const answerBacklogItemRoute = tableRoute("answerBacklogItem", {
  method: "post",
  path: "/api/projects/{id}/backlog/{item_id}/answer",
  tags: ["Argus"],
  summary: "Answer a backlog item",
  description:
    "Records `text` as the operator's answer for the item's next run. When the item has a pending card it is resolved with option `custom` and the item becomes runnable again.",
  request: {
    params: ProjectItemParams,
    body: jsonBody(TextRequestSchema),
  },
  responses: {
    200: jsonResponse(AnswerResultSchema, "Answer recorded."),
    ...errorResponses(...WRITE_ERRORS),
  },
});

export const routeMessageRoute = tableRoute("routeMessage", {
  method: "post",
  path: "/api/projects/{id}/message",
  tags: ["Argus"],
  summary: "Route a message to the only pending question",
  description:
    "Answers the pending card when exactly one is pending. With none, or with several, nothing changes and the answer is 409 listing `pending_questions`: address a specific card or item instead.",
  request: {
    params: ProjectParams,
    body: jsonBody(TextRequestSchema),
  },
  responses: {
    200: jsonResponse(MessageResultSchema, "Routed to the single pending question."),
    ...errorResponses(...WRITE_ERRORS),
    409: jsonResponse(MessageConflictSchema, "Zero or several questions pending: not routed."),
  },
});
