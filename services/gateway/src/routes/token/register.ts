import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/**
 * Token administration (admin scope; `definitions.ts`), each with its handler. The first token
 * cannot come from here (it needs a token): `overseer token create` writes it directly to
 * Postgres. A revocation here evicts the token from this gateway's verification cache at once.
 */
export function registerTokenRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.listTokensRoute), handlers.listTokens(ctx));
  app.openapi(guarded(ctx, routes.createTokenRoute), handlers.createToken(ctx));
  app.openapi(guarded(ctx, routes.revokeTokenRoute), handlers.revokeToken(ctx));
}
