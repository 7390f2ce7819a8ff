import { ForgeDeliveryAcceptedSchema, ForgeWebhookParams } from "@overseer/api-contract";
import { errorResponses, jsonResponse, tableRoute } from "../route-kit.ts";

/**
 * Forge webhooks: a delivery is verified (GitHub `X-Hub-Signature-256`, Gitea/Forgejo
 * `X-Gitea-Signature`: HMAC-SHA256 of the body with `OVERSEER_FORGE_WEBHOOK_SECRET`; GitLab
 * `X-Gitlab-Token`: that secret), then stored once by its delivery id for the coordinator to
 * apply. Nothing else happens in the request, so the forge gets its answer at once.
 */
export const receiveForgeWebhookRoute = tableRoute("receiveForgeWebhook", {
  method: "post",
  path: "/api/v1/forge/{id}/webhooks/{forge}",
  tags: ["Forge"],
  summary: "Receive a forge webhook delivery",
  description:
    "Body: the forge's JSON payload as sent. Headers: GitHub `X-GitHub-Delivery`, `X-GitHub-Event`, `X-Hub-Signature-256`; GitLab `X-Gitlab-Event`, `Idempotency-Key` or `X-Gitlab-Event-UUID`, `X-Gitlab-Token`; Gitea/Forgejo `X-Gitea-Delivery`, `X-Gitea-Event`, `X-Gitea-Signature` (or their `X-Forgejo-*` twins). A redelivery of a stored id answers 202 with `stored: false`. A bad signature (401) or a body that is not a JSON object (400) stores nothing.",
  request: { params: ForgeWebhookParams },
  security: [],
  responses: {
    202: jsonResponse(ForgeDeliveryAcceptedSchema, "Stored (or stored before)."),
    ...errorResponses(400, 401, 404, 413, 503),
  },
});
