import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/** The Argus-compatible routes (`definitions.ts`), each with its handler. */
export function registerArgusRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.getArgusStatusRoute), handlers.getArgusStatus(ctx));
  app.openapi(guarded(ctx, routes.getArgusSnapshotRoute), handlers.getArgusSnapshot(ctx));
  app.openapi(guarded(ctx, routes.resolveDecisionRoute), handlers.resolveDecision(ctx));
  app.openapi(guarded(ctx, routes.answerBacklogItemRoute), handlers.answerBacklogItem(ctx));
  app.openapi(guarded(ctx, routes.routeMessageRoute), handlers.routeMessage(ctx));
}
