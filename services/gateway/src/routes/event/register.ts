import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/** The append-only event log: paged reads and the live SSE stream (`definitions.ts`), each with its handler. */
export function registerEventRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.listProjectEventsRoute), handlers.listProjectEvents(ctx));
  app.openapi(guarded(ctx, routes.streamProjectEventsRoute), handlers.streamProjectEvents(ctx));
}
