import { recordIntakeDelivery } from "@overseer/db";
import { trackerWebhookVerifier } from "@overseer/intake";
import { ApiError } from "../../http/api-error.ts";
import type { GatewayHandler, RouteContext } from "../route-kit.ts";
import type { receiveIntakeWebhookRoute } from "./definitions.ts";
import { existingSource } from "./source-handlers.ts";

/**
 * A tracker's webhook for one source: verified with the secret of the host variable the source
 * names, stored once by delivery id, then a re-read of the issue is queued for the coordinator
 * (the payload only says which issue; its state is read from the tracker).
 */
export function receiveIntakeWebhook(ctx: RouteContext): GatewayHandler<typeof receiveIntakeWebhookRoute> {
  return async (c) => {
    const { source_id } = c.req.valid("param");
    const source = await existingSource(ctx, null, source_id);
    const secretEnv = source.webhook_secret_env;
    const secret = secretEnv === null ? undefined : process.env[secretEnv];
    if (secretEnv === null || secret === undefined || secret === "") {
      throw new ApiError(
        503,
        "webhooks_not_configured",
        secretEnv === null
          ? `Intake source ${source_id} has no webhook secret: add the source again with webhook_secret_env (overseer intake add --webhook-secret-env NAME); polling still reads the tracker.`
          : `The environment variable ${secretEnv} is not set on this gateway; set it to the secret configured in the ${source.kind} webhook.`,
        { source_id, webhook_secret_env: secretEnv },
      );
    }
    const body = await c.req.text();
    const headers = c.req.header();
    const verifier = trackerWebhookVerifier(source.kind);
    if (!verifier.verify(headers, body, secret)) {
      throw new ApiError(
        401,
        "bad_signature",
        `The ${source.kind} delivery's signature does not match the secret in ${secretEnv} (or is missing); nothing was stored. Set the same secret in the ${source.kind} webhook settings.`,
        { source_id },
      );
    }
    const event = verifier.parse(headers, body);
    if (event === null) return c.json({ source_id, delivery_id: null, stored: false, issue_id: null }, 200);
    const stored = await recordIntakeDelivery(ctx.deps.db, {
      sourceId: source_id,
      deliveryId: event.deliveryId,
      issueId: event.issueId,
      what: event.what,
    });
    if (stored) await ctx.deps.queues.intake.read(source_id, event.issueId);
    return c.json({ source_id, delivery_id: event.deliveryId, stored, issue_id: event.issueId }, 200);
  };
}
