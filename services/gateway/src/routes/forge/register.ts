import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/** The forge webhook route (`definitions.ts`) with its handler. */
export function registerForgeRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.receiveForgeWebhookRoute), handlers.receiveForgeWebhook(ctx));
}
