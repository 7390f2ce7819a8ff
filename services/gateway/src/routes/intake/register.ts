import { ApiError } from "../../http/api-error.ts";
import { type GatewayHandler, guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./source-handlers.ts";
import { listTrackerUpdates, redeliverTrackerUpdate } from "./update-handlers.ts";
import { receiveIntakeWebhook } from "./webhook-handler.ts";

/**
 * Tracker intake (`definitions.ts`): a project's sources (add, list, remove, dry run) and the
 * per-source webhook, and the tracker updates (two-way status) with their dead letters. The coordinator's intake runner does the polling and the taking
 * (`services/coordinator/src/intake/intake-runner.ts`); these routes write Postgres and queue
 * re-reads, except `test`, which only reads the tracker.
 */
export function registerIntakeRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.listIntakeSourcesRoute), handlers.listIntakeSources(ctx));
  app.openapi(guarded(ctx, routes.createIntakeSourceRoute), handlers.createIntakeSource(ctx));
  app.openapi(guarded(ctx, routes.removeIntakeSourceRoute), handlers.removeIntakeSource(ctx));
  app.openapi(guarded(ctx, routes.testIntakeSourceRoute), handlers.testIntakeSource(ctx));
  app.openapi(
    guarded(ctx, routes.receiveIntakeWebhookRoute),
    countingRefusals(ctx, receiveIntakeWebhook(ctx)),
  );
  app.openapi(guarded(ctx, routes.listTrackerUpdatesRoute), listTrackerUpdates(ctx));
  app.openapi(guarded(ctx, routes.redeliverTrackerUpdateRoute), redeliverTrackerUpdate(ctx));
}

/** The webhook handler, each refusal it answers counted by its code (`overseer_intake_webhooks_refused_total`). */
function countingRefusals(
  ctx: RouteContext,
  handler: GatewayHandler<typeof routes.receiveIntakeWebhookRoute>,
): GatewayHandler<typeof routes.receiveIntakeWebhookRoute> {
  return async (c, next) => {
    try {
      return await handler(c, next);
    } catch (error) {
      if (error instanceof ApiError) ctx.metrics.intakeWebhooksRefused.inc({ reason: error.code });
      throw error;
    }
  };
}
