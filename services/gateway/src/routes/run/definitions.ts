import { z } from "@hono/zod-openapi";
import {
  limitSchema,
  logCursorSchema,
  ProjectParams,
  RunListSchema,
  RunLogSchema,
  RunParams,
  RunSchema,
  taskIdSchema,
} from "@overseer/api-contract";
import { RUN_STATUSES } from "@overseer/domain";
import { errorResponses, jsonResponse, READ_ERRORS, tableRoute } from "../route-kit.ts";
import { SSE_RESPONSES } from "../sse-response.ts";

/** Runs: list per project, one run (redacted), its prompt, its stored log, and the live log stream. */

const RUN_STATUS_EXPECTED = `a comma-separated list of run statuses (${RUN_STATUSES.join(", ")})`;

const RunListQuery = z.object({
  task: taskIdSchema.optional().openapi({ description: "Only runs of this task." }),
  status: z
    .string({ error: RUN_STATUS_EXPECTED })
    .regex(new RegExp(`^(${RUN_STATUSES.join("|")})(,(${RUN_STATUSES.join("|")}))*$`), {
      error: RUN_STATUS_EXPECTED,
    })
    .optional(),
  before: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}T[0-9:.]+(Z|[+-]\d{2}:\d{2})$/, {
      error: "an ISO-8601 timestamp (next_before of the previous page)",
    })
    .refine(isStorableTime, { error: "a valid ISO-8601 timestamp between years 0001 and 9999" })
    .optional()
    .openapi({ description: "Cursor: `next_before` of the previous page (newest first)." }),
  limit: limitSchema(500, 100),
});

const LogStreamHeaders = z.object({
  "last-event-id": logCursorSchema()
    .optional()
    .openapi({ description: "Resume after this log entry (sent by EventSource on reconnection)." }),
});

const LogStreamQuery = z.object({
  after: logCursorSchema()
    .optional()
    .openapi({ description: "Same as Last-Event-ID, for clients that cannot set headers." }),
  access_token: z
    .string()
    .max(200)
    .optional()
    .openapi({ description: "Bearer token for EventSource clients (never logged)." }),
});

const EARLIEST_TIME = Date.parse("0001-01-01T00:00:00Z");
const LATEST_TIME = Date.parse("9999-12-31T00:00:00Z");

/** Parses, and stays within the years Postgres and `Date#toISOString` agree on. */
function isStorableTime(value: string): boolean {
  const time = Date.parse(value);
  return !Number.isNaN(time) && time >= EARLIEST_TIME && time <= LATEST_TIME;
}

export const listRunsRoute = tableRoute("listRuns", {
  method: "get",
  path: "/api/v1/projects/{id}/runs",
  tags: ["Runs"],
  summary: "List runs (newest first)",
  request: { params: ProjectParams, query: RunListQuery },
  responses: {
    200: jsonResponse(RunListSchema, "One page of runs; pass next_before as before for the next."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const getRunRoute = tableRoute("getRun", {
  method: "get",
  path: "/api/v1/runs/{id}",
  tags: ["Runs"],
  summary: "Get a run (output redacted)",
  request: { params: RunParams },
  responses: { 200: jsonResponse(RunSchema, "The run."), ...errorResponses(...READ_ERRORS) },
});

export const getRunPromptRoute = tableRoute("getRunPrompt", {
  method: "get",
  path: "/api/v1/runs/{id}/prompt",
  tags: ["Runs"],
  summary: "The prompt a run received (redacted)",
  request: { params: RunParams },
  responses: {
    200: jsonResponse(
      z.object({
        run_id: z.string(),
        prompt: z.string().nullable(),
        prompt_chars: z.number().int().nullable(),
      }),
      "The stored prompt; null until the worker reported it.",
    ),
    ...errorResponses(...READ_ERRORS),
  },
});

export const getRunLogRoute = tableRoute("getRunLog", {
  method: "get",
  path: "/api/v1/runs/{id}/log",
  tags: ["Runs"],
  summary: "The stored output of a run (redacted)",
  description: "What Postgres keeps (capped). For live output use GET /api/runs/{id}/log/stream.",
  request: { params: RunParams },
  responses: {
    200: jsonResponse(RunLogSchema, "Stored output; null until the run ended."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const streamRunLogRoute = tableRoute("streamRunLog", {
  method: "get",
  path: "/api/runs/{id}/log/stream",
  tags: ["Live"],
  summary: "Follow a run's output (SSE)",
  description:
    "Server-sent events: `log` events (`data: {\"text\": …}`, `id:` = log entry id; resume with Last-Event-ID), a `usage` event (`data: {tokens_in, tokens_out, tokens_cached, tokens_unpriced, cost_usd, cost}`) whenever the run's recorded usage changed (the live token/cost counter), then one `end` event with the run's final status, after which the server closes the stream. Keep-alive comments are sent while nothing happens. When the live stream is gone (expired, Redis flushed) the stored output is sent as one `log` event with id `stored`. EventSource clients may pass the token as `access_token`.",
  request: { params: RunParams, headers: LogStreamHeaders, query: LogStreamQuery },
  responses: SSE_RESPONSES,
});
