import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/** Run and task transcripts (`definitions.ts`), each with its handler. */
export function registerTranscriptRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.getRunTranscriptRoute), handlers.getRunTranscript(ctx));
  app.openapi(guarded(ctx, routes.getTaskTranscriptRoute), handlers.getTaskTranscript(ctx));
}
