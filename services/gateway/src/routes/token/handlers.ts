import { createApiToken, listApiTokens, revokeApiToken } from "@overseer/db";
import { ApiError } from "../../http/api-error.ts";
import { tokenView } from "../../views/resource-views.ts";
import type { GatewayHandler, RouteContext } from "../route-kit.ts";
import type { createTokenRoute, listTokensRoute, revokeTokenRoute } from "./definitions.ts";

export function listTokens({ deps }: RouteContext): GatewayHandler<typeof listTokensRoute> {
  return async (c) => c.json({ tokens: (await listApiTokens(deps.db)).map(tokenView) }, 200);
}

export function createToken({ deps }: RouteContext): GatewayHandler<typeof createTokenRoute> {
  return async (c) => {
    const body = c.req.valid("json");
    const created = await createApiToken(deps.db, { name: body.name, scope: body.scope });
    return c.json({ id: created.id, name: body.name, scope: created.scope, token: created.token }, 201);
  };
}

/** Revokes the token, evicts it from this gateway's verification cache and ends its board session. */
export function revokeToken({
  deps,
  verifier,
  boardSessions,
}: RouteContext): GatewayHandler<typeof revokeTokenRoute> {
  return async (c) => {
    const { token_id } = c.req.valid("param");
    const revoked = await revokeApiToken(deps.db, token_id);
    verifier.evictTokenId(token_id);
    await boardSessions.endForToken(token_id);
    if (!revoked) {
      throw new ApiError(
        404,
        "not_found",
        `No active token has id ${token_id} (unknown or already revoked); list them with GET /api/v1/tokens.`,
        { token_id },
      );
    }
    return c.json({ revoked: true as const, id: token_id }, 200);
  };
}
