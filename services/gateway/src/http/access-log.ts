import type { Logger } from "@overseer/runtime";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { GatewayEnv } from "../gateway-env.ts";
import type { GatewayMetrics } from "../metrics/gateway-metrics.ts";

/**
 * One structured line per request, and the latency histogram. The line carries the path
 * without its query string (an EventSource `access_token` lives there) and never a header;
 * the logger additionally censors any `authorization`/`token` field and token-shaped text.
 * The route label is the registered pattern (`/api/projects/:id/status`), so label
 * cardinality stays bounded whatever ids clients send.
 */
export function accessLog(logger: Logger, metrics: GatewayMetrics): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const started = performance.now();
    let failed = false;
    try {
      await next();
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const status = failed ? 500 : c.res.status;
      const pattern = routePath(c, -1);
      const route = pattern === "*" || pattern === "/*" || pattern === "" ? "unmatched" : pattern;
      metrics.httpDuration.observe({ method: c.req.method, route, status: String(status) }, seconds);
      const token = c.get("token");
      const line = {
        reqId: c.get("requestId"),
        method: c.req.method,
        path: c.req.path.slice(0, 512),
        route,
        status,
        ms: Math.round(seconds * 10_000) / 10,
        tokenId: token?.id,
        tokenName: token?.name,
      };
      if (status >= 500) logger.error(line, "request failed");
      else logger.info(line, "request");
    }
  };
}
