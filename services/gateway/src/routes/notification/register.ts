import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/**
 * Notification subscriptions and deliveries (`definitions.ts`): add, list, remove, test and
 * rotate a subscription; list deliveries and redeliver a dead letter. The coordinators do the
 * sending (`services/coordinator/src/notify/notification-runner.ts`); these routes only write
 * Postgres, except `test`, which sends one signed message itself.
 */
export function registerNotificationRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.listSubscriptionsRoute), handlers.listSubscriptions(ctx));
  app.openapi(guarded(ctx, routes.createSubscriptionRoute), handlers.createSubscription(ctx));
  app.openapi(guarded(ctx, routes.removeSubscriptionRoute), handlers.removeSubscription(ctx));
  app.openapi(guarded(ctx, routes.testSubscriptionRoute), handlers.testSubscription(ctx));
  app.openapi(guarded(ctx, routes.rotateSubscriptionSecretRoute), handlers.rotateSecret(ctx));
  app.openapi(guarded(ctx, routes.listDeliveriesRoute), handlers.listDeliveries(ctx));
  app.openapi(guarded(ctx, routes.redeliverDeliveryRoute), handlers.redeliverDelivery(ctx));
}
