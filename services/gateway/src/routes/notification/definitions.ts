import {
  DeliveryListQuery,
  DeliveryListSchema,
  DeliveryParams,
  RedeliveredSchema,
  SecretRotateBody,
  SecretRotatedSchema,
  SubscriptionCreateBody,
  SubscriptionCreatedSchema,
  SubscriptionListQuery,
  SubscriptionListSchema,
  SubscriptionParams,
  SubscriptionRemovedSchema,
  SubscriptionTestedSchema,
} from "@overseer/api-contract";
import {
  errorResponses,
  jsonBody,
  jsonResponse,
  READ_ERRORS,
  tableRoute,
  WRITE_ERRORS,
} from "../route-kit.ts";

const tags = ["Notifications"];

export const listSubscriptionsRoute = tableRoute("listSubscriptions", {
  method: "get",
  path: "/api/v1/notifications/subscriptions",
  tags,
  summary: "List notification subscriptions (never their secrets)",
  request: { query: SubscriptionListQuery },
  responses: {
    200: jsonResponse(SubscriptionListSchema, "Subscriptions, oldest first."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const createSubscriptionRoute = tableRoute("createSubscription", {
  method: "post",
  path: "/api/v1/notifications/subscriptions",
  tags,
  summary: "Subscribe a Standard Webhooks receiver to notifications",
  description:
    "Filtered by project, event type and least severity. The answer carries the signing secret once; each notification is then POSTed signed (webhook-id, webhook-timestamp, webhook-signature), in order per project, retried with backoff, a dead letter after its last attempt.",
  request: { body: jsonBody(SubscriptionCreateBody) },
  responses: {
    201: jsonResponse(SubscriptionCreatedSchema, "Created; the secret is in `secret`."),
    ...errorResponses(...WRITE_ERRORS),
  },
});

export const removeSubscriptionRoute = tableRoute("removeSubscription", {
  method: "delete",
  path: "/api/v1/notifications/subscriptions/{subscription_id}",
  tags,
  summary: "Remove a subscription and its deliveries",
  request: { params: SubscriptionParams },
  responses: {
    200: jsonResponse(SubscriptionRemovedSchema, "Removed."),
    ...errorResponses(400, 401, 403, 404, 429),
  },
});

export const testSubscriptionRoute = tableRoute("testSubscription", {
  method: "post",
  path: "/api/v1/notifications/subscriptions/{subscription_id}/test",
  tags,
  summary: "Send a signed test message (type overseer.test) to a subscription now",
  description: "One attempt, answered with the receiver's status; nothing is queued or recorded.",
  request: { params: SubscriptionParams },
  responses: {
    200: jsonResponse(SubscriptionTestedSchema, "The attempt's outcome (ok false: the receiver refused)."),
    ...errorResponses(400, 401, 403, 404, 429),
  },
});

export const rotateSubscriptionSecretRoute = tableRoute("rotateSubscriptionSecret", {
  method: "post",
  path: "/api/v1/notifications/subscriptions/{subscription_id}/rotate-secret",
  tags,
  summary: "Rotate a subscription's signing secret",
  description:
    "Adds a new secret; the previous ones keep signing beside it (one v1 signature each) until the overlap ends, so the receiver can switch without a gap.",
  request: { params: SubscriptionParams, body: jsonBody(SecretRotateBody, false) },
  responses: {
    200: jsonResponse(SecretRotatedSchema, "Rotated; the new secret is in `secret`."),
    ...errorResponses(...WRITE_ERRORS),
  },
});

export const listDeliveriesRoute = tableRoute("listDeliveries", {
  method: "get",
  path: "/api/v1/notifications/deliveries",
  tags,
  summary: "List notification deliveries: status, attempts, dead letters",
  request: { query: DeliveryListQuery },
  responses: {
    200: jsonResponse(DeliveryListSchema, "Deliveries, newest first."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const redeliverDeliveryRoute = tableRoute("redeliverDelivery", {
  method: "post",
  path: "/api/v1/notifications/deliveries/{delivery_id}/redeliver",
  tags,
  summary: "Send a dead letter again (idempotent)",
  description:
    "A dead delivery becomes pending with its attempts reset and is sent again with the same webhook-id; a pending or delivered one is left as it is (`redelivered: false`), so asking twice sends once.",
  request: { params: DeliveryParams },
  responses: {
    200: jsonResponse(RedeliveredSchema, "The delivery after the request."),
    ...errorResponses(400, 401, 403, 404, 429),
  },
});
