import { z } from "@hono/zod-openapi";
import { TokenListSchema, TokenParams, TokenRevokedSchema } from "@overseer/api-contract";
import { TOKEN_SCOPES } from "@overseer/db";
import { errorResponses, jsonBody, jsonResponse, tableRoute, WRITE_ERRORS } from "../route-kit.ts";

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

export const listTokensRoute = tableRoute("listTokens", {
  method: "get",
  path: "/api/v1/tokens",
  tags: ["Tokens"],
  summary: "List API tokens (never their secrets)",
  responses: {
    200: jsonResponse(TokenListSchema, "Tokens, oldest first."),
    ...errorResponses(401, 403),
  },
});

export const createTokenRoute = tableRoute("createToken", {
  method: "post",
  path: "/api/v1/tokens",
  tags: ["Tokens"],
  summary: "Create an API token",
  request: { body: jsonBody(TokenCreateBody) },
  responses: {
    201: jsonResponse(CreatedTokenSchema, "Created; the secret is in `token`."),
    ...errorResponses(...WRITE_ERRORS),
  },
});

export const revokeTokenRoute = tableRoute("revokeToken", {
  method: "delete",
  path: "/api/v1/tokens/{token_id}",
  tags: ["Tokens"],
  summary: "Revoke an API token",
  request: { params: TokenParams },
  responses: {
    200: jsonResponse(TokenRevokedSchema, "Revoked."),
    ...errorResponses(400, 401, 403, 404, 429),
  },
});
