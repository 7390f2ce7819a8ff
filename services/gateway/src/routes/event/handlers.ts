import { latestEventId, listEvents } from "@overseer/db";
import { streamProjectEvents as followEvents } from "../../live/project-event-stream.ts";
import { eventView } from "../../views/resource-views.ts";
import { existingProject, type GatewayHandler, type RouteContext } from "../route-kit.ts";
import { sseResponse } from "../sse-response.ts";
import type { listProjectEventsRoute, streamProjectEventsRoute } from "./definitions.ts";

export function listProjectEvents({ deps }: RouteContext): GatewayHandler<typeof listProjectEventsRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    await existingProject(deps.db, id);
    const rows = await listEvents(deps.db, {
      projectId: id,
      after: q.after ?? null,
      limit: q.limit,
      types: q.type ? q.type.split(",") : undefined,
      taskId: q.task,
      runId: q.run,
    });
    const events = rows.map(eventView);
    return c.json({ events, next_after: events.at(-1)?.id ?? q.after ?? null }, 200);
  };
}

/** Replays from the given cursor (or starts at the latest event), then follows live events. */
export function streamProjectEvents(ctx: RouteContext): GatewayHandler<typeof streamProjectEventsRoute> {
  const { db } = ctx.deps;
  return async (c) => {
    const { id } = c.req.valid("param");
    await existingProject(db, id);
    const given = c.req.valid("header")["last-event-id"] ?? c.req.valid("query").after;
    const failure = { message: "event stream failed", fields: { projectId: id } };
    return sseResponse(c, ctx, "events", failure, async (stream, handle) => {
      const cursor = given ?? (await latestEventId(db, id)) ?? "0";
      await followEvents(stream, handle, {
        db,
        subscriber: ctx.subscriber,
        projectId: id,
        cursor,
        keepAliveMs: ctx.options.keepAliveMs,
      });
    });
  };
}
