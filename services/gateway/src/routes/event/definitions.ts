import { z } from "@hono/zod-openapi";
import {
  EventPageSchema,
  eventCursorSchema,
  eventIdSchema,
  limitSchema,
  ProjectParams,
  runIdSchema,
  taskIdSchema,
} from "@overseer/api-contract";
import { errorResponses, jsonResponse, READ_ERRORS, tableRoute } from "../route-kit.ts";
import { SSE_RESPONSES } from "../sse-response.ts";

const EVENT_TYPE = /^[a-z_]+\.[a-z_]+$/;

const EventListQuery = z.object({
  after: eventCursorSchema.optional(),
  limit: limitSchema(1000, 200),
  type: z
    .string()
    .max(2000)
    .refine((v) => v.split(",").every((t) => EVENT_TYPE.test(t)), {
      error: "a comma-separated list of event types such as decision.resolved",
    })
    .optional(),
  task: taskIdSchema.optional(),
  run: runIdSchema.optional(),
});

const StreamHeaders = z.object({
  "last-event-id": eventIdSchema()
    .optional()
    .openapi({ description: "Resume after this event (EventSource sends it on reconnection)." }),
});

const StreamQuery = z.object({
  after: eventCursorSchema.optional().openapi({
    description: "Start after this event id (0: from the first event). Default: only new events.",
  }),
  access_token: z
    .string()
    .max(200)
    .optional()
    .openapi({ description: "Bearer token for EventSource clients (never logged)." }),
});

export const listProjectEventsRoute = tableRoute("listProjectEvents", {
  method: "get",
  path: "/api/v1/projects/{id}/events",
  tags: ["Events"],
  summary: "List events after a cursor",
  description: "In id order. Pass `next_after` back as `after` to continue.",
  request: { params: ProjectParams, query: EventListQuery },
  responses: {
    200: jsonResponse(EventPageSchema, "One page of events."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const streamProjectEventsRoute = tableRoute("streamProjectEvents", {
  method: "get",
  path: "/api/projects/{id}/events/stream",
  tags: ["Live"],
  summary: "Follow a project's events (SSE)",
  description:
    "Server-sent events, one per stored event (`data:` = the Event JSON, `id:` = its Postgres id). Without a cursor only new events are sent; with Last-Event-ID (or `after`) the missed events are replayed from Postgres first, exactly once and in order. Keep-alive comments are sent while nothing happens. EventSource clients may pass the token as `access_token`.",
  request: { params: ProjectParams, headers: StreamHeaders, query: StreamQuery },
  responses: SSE_RESPONSES,
});
