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
import { latestEventId, listEvents } from "@overseer/db";
import { streamProjectEvents } from "../live/project-event-stream.ts";
import { eventView } from "../views/resource-views.ts";
import {
  errorResponses,
  existingProject,
  guarded,
  jsonResponse,
  READ_ERRORS,
  type RouteApp,
  type RouteContext,
  tableRoute,
} from "./route-kit.ts";
import { SSE_RESPONSES, sseResponse } from "./sse-response.ts";

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

/** The append-only event log: paged reads and the live SSE stream. */
export function registerEventRoutes(app: RouteApp, ctx: RouteContext): void {
  const { db } = ctx.deps;

  app.openapi(
    guarded(
      ctx,
      tableRoute("listProjectEvents", {
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
      }),
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const q = c.req.valid("query");
      await existingProject(db, id);
      const rows = await listEvents(db, {
        projectId: id,
        after: q.after ?? null,
        limit: q.limit,
        types: q.type ? q.type.split(",") : undefined,
        taskId: q.task,
        runId: q.run,
      });
      const events = rows.map(eventView);
      return c.json({ events, next_after: events.at(-1)?.id ?? q.after ?? null }, 200);
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("streamProjectEvents", {
        method: "get",
        path: "/api/projects/{id}/events/stream",
        tags: ["Live"],
        summary: "Follow a project's events (SSE)",
        description:
          "Server-sent events, one per stored event (`data:` = the Event JSON, `id:` = its Postgres id). Without a cursor only new events are sent; with Last-Event-ID (or `after`) the missed events are replayed from Postgres first, exactly once and in order. Keep-alive comments are sent while nothing happens. EventSource clients may pass the token as `access_token`.",
        request: { params: ProjectParams, headers: StreamHeaders, query: StreamQuery },
        responses: SSE_RESPONSES,
      }),
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      await existingProject(db, id);
      const given = c.req.valid("header")["last-event-id"] ?? c.req.valid("query").after;
      const failure = { message: "event stream failed", fields: { projectId: id } };
      return sseResponse(c, ctx, "events", failure, async (stream, handle) => {
        const cursor = given ?? (await latestEventId(db, id)) ?? "0";
        await streamProjectEvents(stream, handle, {
          db,
          subscriber: ctx.subscriber,
          projectId: id,
          cursor,
          keepAliveMs: ctx.options.keepAliveMs,
        });
      });
    },
  );
}
