import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { GatewayEnv } from "../gateway-env.ts";
import { requireScope } from "../http/request-guards.ts";
import { DASHBOARD_PAGE } from "../views/dashboard-page.ts";
import { DOCS_PAGE } from "../views/docs-page.ts";
import type { StaticPage } from "../views/page-shell.ts";
import { errorResponses, type GatewayApp, type RouteContext } from "./route-kit.ts";

const html = (description: string) => ({
  description,
  content: { "text/html": { schema: { type: "string" as const } } },
});

/** The OpenAPI document (read token) and the two page shells (no token: they hold no data). */
export function registerPageRoutes(
  app: GatewayApp,
  _ctx: RouteContext,
  document: () => Record<string, unknown>,
): void {
  let cached: Record<string, unknown> | null = null;

  app.openapi(
    createRoute({
      method: "get",
      path: "/openapi.json",
      tags: ["Operations"],
      summary: "This OpenAPI document",
      middleware: [requireScope("read")] as const,
      responses: {
        200: {
          description: "OpenAPI 3.0 document.",
          content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
        },
        ...errorResponses(401, 403),
      },
    }),
    (c) => {
      cached ??= document();
      return c.json(cached, 200);
    },
  );

  const page = (p: StaticPage) => (c: Context<GatewayEnv>) => {
    c.header("Content-Security-Policy", p.contentSecurityPolicy);
    c.header("Cache-Control", "no-cache");
    return c.html(p.html);
  };

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags: ["Pages"],
      summary: "Dashboard (page shell, no token needed; it asks for one)",
      security: [],
      responses: { 200: html("Self-contained HTML page.") },
    }),
    page(DASHBOARD_PAGE),
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/docs",
      tags: ["Pages"],
      summary: "Browsable API documentation (page shell, no token needed; it asks for one)",
      security: [],
      responses: { 200: html("Self-contained HTML page rendering /openapi.json.") },
    }),
    page(DOCS_PAGE),
  );
}
