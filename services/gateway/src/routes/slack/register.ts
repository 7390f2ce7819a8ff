import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/** The Slack interactivity route (`definitions.ts`) with its handler. */
export function registerSlackRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.receiveSlackInteractionRoute), handlers.receiveSlackInteraction(ctx));
}
