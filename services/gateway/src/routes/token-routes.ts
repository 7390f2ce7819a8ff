import { z } from "@hono/zod-openapi";
import { TokenListSchema, TokenParams, TokenRevokedSchema } from "@overseer/api-contract";
import { createApiToken, listApiTokens, revokeApiToken, TOKEN_SCOPES } from "@overseer/db";
import { ApiError } from "../http/api-error.ts";
import { tokenView } from "../views/resource-views.ts";
import {
  errorResponses,
  guarded,
  jsonBody,
  jsonResponse,
  type RouteApp,
  type RouteContext,
  tableRoute,
  WRITE_ERRORS,
} from "./route-kit.ts";

const TokenCreateBody = z
  .strictObject({
    name: z
      .string({ error: "a name of letters, digits, ., _, - or spaces (at most 100)" })
      .regex(/^[A-Za-z0-9][A-Za-z0-9._ -]{0,99}$/, {
        error: "a name of letters, digits, ., _, - or spaces (at most 100)",
      })
      .openapi({ example: "prometheus" }),
    scope: z.enum(TOKEN_SCOPES, { error: `one of ${TOKEN_SCOPES.join(", ")}` }),
  })
  .openapi("TokenCreateRequest");

const CreatedTokenSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scope: z.enum(TOKEN_SCOPES),
    token: z.string().openapi({ description: "The secret, shown this once; only its hash is stored." }),
  })
  .openapi("CreatedToken");

/**
 * Token administration (admin scope). The first token cannot come from here (it needs a
 * token): `overseer token create` writes it directly to Postgres. A revocation here evicts
 * the token from this gateway's verification cache at once.
 */
export function registerTokenRoutes(app: RouteApp, ctx: RouteContext): void {
  const { db } = ctx.deps;

  app.openapi(
    guarded(
      ctx,
      tableRoute("listTokens", {
        method: "get",
        path: "/api/v1/tokens",
        tags: ["Tokens"],
        summary: "List API tokens (never their secrets)",
        responses: {
          200: jsonResponse(TokenListSchema, "Tokens, oldest first."),
          ...errorResponses(401, 403),
        },
      }),
    ),
    async (c) => c.json({ tokens: (await listApiTokens(db)).map(tokenView) }, 200),
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("createToken", {
        method: "post",
        path: "/api/v1/tokens",
        tags: ["Tokens"],
        summary: "Create an API token",
        request: { body: jsonBody(TokenCreateBody) },
        responses: {
          201: jsonResponse(CreatedTokenSchema, "Created; the secret is in `token`."),
          ...errorResponses(...WRITE_ERRORS),
        },
      }),
    ),
    async (c) => {
      const body = c.req.valid("json");
      const created = await createApiToken(db, { name: body.name, scope: body.scope });
      return c.json({ id: created.id, name: body.name, scope: created.scope, token: created.token }, 201);
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("revokeToken", {
        method: "delete",
        path: "/api/v1/tokens/{token_id}",
        tags: ["Tokens"],
        summary: "Revoke an API token",
        request: { params: TokenParams },
        responses: {
          200: jsonResponse(TokenRevokedSchema, "Revoked."),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      }),
    ),
    async (c) => {
      const { token_id } = c.req.valid("param");
      const revoked = await revokeApiToken(db, token_id);
      ctx.verifier.evictTokenId(token_id);
      await ctx.boardSessions.endForToken(token_id);
      if (!revoked) {
        throw new ApiError(
          404,
          "not_found",
          `No active token has id ${token_id} (unknown or already revoked); list them with GET /api/v1/tokens.`,
          {
            token_id,
          },
        );
      }
      return c.json({ revoked: true as const, id: token_id }, 200);
    },
  );
}
