import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/**
 * The MCP endpoint (`definitions.ts`). Its tools are dispatched through `app` itself, so each
 * goes through the whole request pipeline as its own route.
 */
export function registerMcpRoutes(app: RouteApp, ctx: RouteContext): void {
  const dispatch = async (path: string, init: RequestInit) => app.request(path, init);
  app.openapi(guarded(ctx, routes.callMcpRoute), handlers.callMcp(dispatch));
  app.on(["GET", "DELETE"], routes.callMcpRoute.path, handlers.mcpMethodNotAllowed);
}
