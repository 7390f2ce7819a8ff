import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { GatewayEnv } from "../gateway-env.ts";
import { APP_CSP, DOCS_CSP, loadWebAssets, notBuiltPage } from "../views/web-assets.ts";
import { errorResponses, guarded, type RouteApp, type RouteContext, tableRoute } from "./route-kit.ts";

const html = (description: string) => ({
  description,
  content: { "text/html": { schema: { type: "string" as const } } },
});

/**
 * The OpenAPI document (read token), and the web app built from `apps/web`: the app shell at
 * `/`, the API reference (Swagger UI from local assets) at `/docs`, and their hashed assets
 * under `/assets/`. Pages and assets need no token: they hold no data, and ask for a token
 * that they send as a bearer header with every data request.
 */
export function registerPageRoutes(
  app: RouteApp,
  ctx: RouteContext,
  document: () => Record<string, unknown>,
): void {
  let cached: Record<string, unknown> | null = null;
  const web = loadWebAssets(ctx.options.webDir);
  if (!web.built) ctx.deps.logger.warn({ dir: web.dir }, "web app not built: / explains how to build it");

  app.openapi(
    guarded(
      ctx,
      tableRoute("getOpenApiDocument", {
        method: "get",
        path: "/openapi.json",
        tags: ["Operations"],
        summary: "This OpenAPI document",
        responses: {
          200: {
            description: "OpenAPI 3.0 document.",
            content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
          },
          ...errorResponses(401, 403),
        },
      }),
    ),
    (c) => {
      cached ??= document();
      return c.json(cached, 200);
    },
  );

  const page = (name: "index.html" | "docs.html", csp: string) => (c: Context<GatewayEnv>) => {
    const asset = web.page(name);
    c.header("Cache-Control", "no-cache");
    if (!asset) return c.html(notBuiltPage(web.dir), 503);
    c.header("Content-Security-Policy", csp);
    return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, { "Content-Type": asset.contentType });
  };

  app.openapi(
    guarded(
      ctx,
      tableRoute("getWebApp", {
        method: "get",
        path: "/",
        tags: ["Pages"],
        summary: "Operator web app (page shell, no token needed; it asks for one)",
        security: [],
        responses: {
          200: html("The app's HTML entry point (apps/web)."),
          503: html("The web app is not built; the page says how to build it."),
        },
      }),
    ),
    page("index.html", APP_CSP),
  );
  app.openapi(
    guarded(
      ctx,
      tableRoute("getApiReference", {
        method: "get",
        path: "/docs",
        tags: ["Pages"],
        summary: "API reference (Swagger UI from local assets, no token needed; it asks for one)",
        security: [],
        responses: {
          200: html("Swagger UI rendering /openapi.json."),
          503: html("The web app is not built; the page says how to build it."),
        },
      }),
    ),
    page("docs.html", DOCS_CSP),
  );

  // Hashed, immutable build output; unlisted in the API document.
  app.get("/assets/:name", (c) => {
    const asset = web.asset(c.req.param("name"));
    if (!asset) return c.notFound();
    c.header("Cache-Control", "public, max-age=31536000, immutable");
    return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, { "Content-Type": asset.contentType });
  });
}
