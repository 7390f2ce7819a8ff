import { CommitDiffReader } from "../../operations/commit-diff-reader.ts";
import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/** Largest commit patch the diff route returns. */
const MAX_PATCH_BYTES = 512 * 1024;

/** The web app's read models and controls (`definitions.ts`), each with its handler. */
export function registerFleetRoutes(app: RouteApp, ctx: RouteContext): void {
  const diffs = new CommitDiffReader(ctx.options.dataDir, MAX_PATCH_BYTES);
  app.openapi(guarded(ctx, routes.getSessionRoute), handlers.getSession);
  app.openapi(guarded(ctx, routes.getFleetRoute), handlers.getFleet(ctx));
  app.openapi(guarded(ctx, routes.listFleetDecisionsRoute), handlers.listFleetDecisions(ctx));
  app.openapi(guarded(ctx, routes.listFleetIncidentsRoute), handlers.listFleetIncidents(ctx));
  app.openapi(guarded(ctx, routes.getRunStatsRoute), handlers.getRunStats(ctx));
  app.openapi(guarded(ctx, routes.startProjectRoute), handlers.startProject(ctx));
  app.openapi(guarded(ctx, routes.getRunDiffRoute), handlers.getRunDiff(ctx, diffs));
}
