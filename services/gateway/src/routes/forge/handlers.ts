import { createHmac, timingSafeEqual } from "node:crypto";
import { verify } from "@octokit/webhooks-methods";
import { recordForgeDelivery } from "@overseer/db";
import { ApiError } from "../../http/api-error.ts";
import { existingProject, type GatewayHandler, type RouteContext } from "../route-kit.ts";
import type { receiveForgeWebhookRoute } from "./definitions.ts";

type Forge = "github" | "gitlab" | "gitea";

/** Where each forge puts the delivery id, the event name and its proof of the secret. */
const HEADERS: Record<Forge, { delivery: string[]; event: string[]; proof: string[] }> = {
  github: { delivery: ["x-github-delivery"], event: ["x-github-event"], proof: ["x-hub-signature-256"] },
  gitlab: {
    delivery: ["idempotency-key", "x-gitlab-event-uuid"],
    event: ["x-gitlab-event"],
    proof: ["x-gitlab-token"],
  },
  gitea: {
    delivery: ["x-gitea-delivery", "x-forgejo-delivery"],
    event: ["x-gitea-event", "x-forgejo-event"],
    proof: ["x-gitea-signature", "x-forgejo-signature"],
  },
};

export function receiveForgeWebhook(ctx: RouteContext): GatewayHandler<typeof receiveForgeWebhookRoute> {
  return async (c) => {
    const { id, forge } = c.req.valid("param");
    const secret = ctx.options.forgeWebhookSecret;
    if (!secret) {
      throw new ApiError(
        503,
        "webhooks_not_configured",
        "Forge webhooks are not configured on this gateway: set OVERSEER_FORGE_WEBHOOK_SECRET and the same secret in the forge's webhook settings.",
      );
    }
    const names = HEADERS[forge];
    const header = (candidates: string[]) =>
      candidates.map((name) => c.req.header(name)).find((value) => value !== undefined && value !== "");
    const body = await c.req.text();
    const proof = header(names.proof);
    if (!proof || !(await proves(forge, secret, body, proof))) {
      throw new ApiError(
        401,
        "bad_signature",
        `The ${forge} delivery's ${names.proof[0]} does not match OVERSEER_FORGE_WEBHOOK_SECRET (or is missing); nothing was stored. Set the same secret in the forge's webhook settings.`,
        { header: names.proof[0] },
      );
    }
    const deliveryId = header(names.delivery);
    const event = header(names.event);
    if (!deliveryId || !event) {
      throw new ApiError(
        400,
        "invalid_delivery",
        `A ${forge} delivery needs ${names.delivery[0]} and ${names.event[0]} headers.`,
        {
          missing: [!deliveryId && names.delivery[0], !event && names.event[0]].filter(Boolean),
        },
      );
    }
    let payload: unknown;
    try {
      payload = JSON.parse(body);
    } catch {
      payload = undefined;
    }
    if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
      throw new ApiError(
        400,
        "invalid_delivery",
        `The ${forge} delivery's body is not a JSON object; set the webhook's content type to application/json.`,
      );
    }
    await existingProject(ctx.deps.db, id);
    const stored = await recordForgeDelivery(ctx.deps.db, {
      forge,
      deliveryId,
      projectId: id,
      event,
      action: actionOf(forge, payload as Record<string, unknown>),
      payload,
    });
    return c.json({ forge, delivery_id: deliveryId, event, stored }, 202);
  };
}

/** Whether `proof` shows the sender holds `secret`, the way each forge proves it. */
async function proves(forge: Forge, secret: string, body: string, proof: string): Promise<boolean> {
  if (forge === "github") return verify(secret, body, proof).catch(() => false);
  const expected =
    forge === "gitlab"
      ? Buffer.from(secret)
      : Buffer.from(createHmac("sha256", secret).update(body).digest("hex"));
  const given = Buffer.from(forge === "gitlab" ? proof : proof.toLowerCase());
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The payload's action (`opened`, `submitted`…), where the forge puts one. */
function actionOf(forge: Forge, payload: Record<string, unknown>): string | null {
  if (forge === "gitlab") {
    const attributes = payload.object_attributes;
    const action =
      typeof attributes === "object" && attributes !== null
        ? (attributes as { action?: unknown }).action
        : null;
    return typeof action === "string" ? action : null;
  }
  return typeof payload.action === "string" ? payload.action : null;
}
