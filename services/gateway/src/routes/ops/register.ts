import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/** Operations routes (`definitions.ts`), each with its handler. */
export function registerOpsRoutes(app: RouteApp, ctx: RouteContext): void {
  const startedAt = Date.now();
  app.openapi(guarded(ctx, routes.getHealthRoute), handlers.getHealth(startedAt));
  app.openapi(guarded(ctx, routes.getReadinessRoute), handlers.getReadiness(ctx));
  app.openapi(guarded(ctx, routes.getMetricsRoute), handlers.getMetrics(ctx));
  app.openapi(guarded(ctx, routes.listWorkersRoute), handlers.listWorkers(ctx));
  app.openapi(guarded(ctx, routes.drainWorkerRoute), handlers.drainWorker(ctx));
  app.openapi(guarded(ctx, routes.listQueuesRoute), handlers.listQueues(ctx));
}
