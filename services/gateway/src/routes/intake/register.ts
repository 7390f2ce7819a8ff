import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./source-handlers.ts";
import { receiveIntakeWebhook } from "./webhook-handler.ts";

/**
 * Tracker intake (`definitions.ts`): a project's sources (add, list, remove, dry run) and the
 * per-source webhook. The coordinator's intake runner does the polling and the taking
 * (`services/coordinator/src/intake/intake-runner.ts`); these routes write Postgres and queue
 * re-reads, except `test`, which only reads the tracker.
 */
export function registerIntakeRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.listIntakeSourcesRoute), handlers.listIntakeSources(ctx));
  app.openapi(guarded(ctx, routes.createIntakeSourceRoute), handlers.createIntakeSource(ctx));
  app.openapi(guarded(ctx, routes.removeIntakeSourceRoute), handlers.removeIntakeSource(ctx));
  app.openapi(guarded(ctx, routes.testIntakeSourceRoute), handlers.testIntakeSource(ctx));
  app.openapi(guarded(ctx, routes.receiveIntakeWebhookRoute), receiveIntakeWebhook(ctx));
}
