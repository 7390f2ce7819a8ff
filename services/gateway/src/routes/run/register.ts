import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/** Runs (`definitions.ts`), each with its handler. */
export function registerRunRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.listRunsRoute), handlers.listRuns(ctx));
  app.openapi(guarded(ctx, routes.getRunRoute), handlers.getRun(ctx));
  app.openapi(guarded(ctx, routes.getRunPromptRoute), handlers.getRunPrompt(ctx));
  app.openapi(guarded(ctx, routes.getRunLogRoute), handlers.getRunLog(ctx));
  app.openapi(guarded(ctx, routes.streamRunLogRoute), handlers.streamRunLog(ctx));
}
