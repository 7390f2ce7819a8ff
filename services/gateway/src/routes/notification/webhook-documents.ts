import { z } from "@hono/zod-openapi";
import { WEBHOOK_DOCUMENTED_PAYLOADS } from "@overseer/api-contract";
import type { RouteApp } from "../route-kit.ts";

/** The Standard Webhooks headers every notification carries (README "Intake and notifications"). */
const StandardWebhookHeaders = z.object({
  "webhook-id": z.string().openapi({
    description: "The delivery's id (msg_…): the same on every attempt; dedupe by it.",
    example: "msg_2b7e1f0a9c3d4e5f8a1b2c3d4e5f6a7b",
  }),
  "webhook-timestamp": z
    .string()
    .openapi({ description: "Unix seconds when this attempt was signed.", example: "1767225600" }),
  "webhook-signature": z.string().openapi({
    description:
      "Space-separated `v1,<base64 HMAC-SHA256>` signatures of `<id>.<timestamp>.<body>`, one per active secret (two during a rotation); verify with a Standard Webhooks library.",
  }),
});

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per notification type (and the test message),
 * each a signed POST of its versioned payload schema (`@overseer/api-contract`'s
 * `notification-schemas.ts`) that the receiver answers with any 2xx.
 */
export function registerWebhookDocuments(app: RouteApp): void {
  for (const [type, schema] of Object.entries(WEBHOOK_DOCUMENTED_PAYLOADS)) {
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: type,
      operationId: `webhook_${type.replace(".", "_")}`,
      tags: ["Webhooks"],
      summary: `The ${type} notification, POSTed to a subscription's URL`,
      request: {
        headers: StandardWebhookHeaders,
        body: { content: { "application/json": { schema } }, required: true },
      },
      responses: {
        200: {
          description: "Any 2xx: received. Anything else, a redirect or no answer: retried with backoff.",
        },
      },
    });
  }
}
