import type { Logger } from "@overseer/runtime";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { GatewayEnv } from "../gateway-env.ts";
import type { GatewayMetrics } from "../metrics/gateway-metrics.ts";

/** Which successful fast reads get an access log line (`GatewayOptions.accessLogSample`). */
export interface AccessLogSampling {
  /** One in this many; 1: every one. */
  readonly accessLogSample: number;
  /** A read at least this slow (ms) always gets its line. */
  readonly accessLogSlowMs: number;
}

/**
 * One structured line per request, and the latency histogram (every request). Successful fast
 * reads (GET/HEAD below 400 within `accessLogSlowMs`: dashboards polling the fleet and status
 * several times a second) get a line one in `accessLogSample` times, with `sampled` saying how
 * many it stands for: at 1,000 projects the line per request (its serialization, redaction and
 * write) took ~12 % of the gateway's busy CPU. Errors, writes and slow requests always get theirs.
 * The line carries the path
 * without its query string (an EventSource `access_token` lives there) and never a header;
 * the logger additionally censors any `authorization`/`token` field and token-shaped text.
 * The route label is the registered pattern (`/api/projects/:id/status`), so label
 * cardinality stays bounded whatever ids clients send.
 */
export function accessLog(
  logger: Logger,
  metrics: GatewayMetrics,
  sampling: AccessLogSampling,
): MiddlewareHandler<GatewayEnv> {
  let reads = 0;
  const logged = (method: string, status: number, ms: number): number | null => {
    if (status >= 400 || (method !== "GET" && method !== "HEAD") || ms >= sampling.accessLogSlowMs) return 1;
    return reads++ % sampling.accessLogSample === 0 ? sampling.accessLogSample : null;
  };
  return async (c, next) => {
    const started = performance.now();
    let failed = false;
    try {
      await next();
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      const ms = performance.now() - started;
      const status = failed ? 500 : c.res.status;
      const pattern = routePath(c, -1);
      const route = pattern === "*" || pattern === "/*" || pattern === "" ? "unmatched" : pattern;
      metrics.httpDuration.observe({ method: c.req.method, route, status: String(status) }, ms / 1000);
      // How many requests the line stands for; null: none (not sampled).
      const sampled = logged(c.req.method, status, ms);
      if (sampled !== null) {
        const token = c.get("token");
        const line = {
          reqId: c.get("requestId"),
          method: c.req.method,
          path: c.req.path.slice(0, 512),
          route,
          status,
          ms: Math.round(ms * 10) / 10,
          tokenId: token?.id,
          tokenName: token?.name,
          ...(sampled > 1 ? { sampled } : {}),
        };
        if (status >= 500) logger.error(line, "request failed");
        else logger.info(line, "request");
      }
    }
  };
}
