import { z } from "@hono/zod-openapi";
import { WorkerSchema } from "@overseer/api-contract";
import { pingDatabase } from "@overseer/db";
import { withTimeout } from "../http/with-timeout.ts";
import { workerView } from "../views/resource-views.ts";
import {
  errorResponses,
  guarded,
  jsonResponse,
  type RouteApp,
  type RouteContext,
  tableRoute,
} from "./route-kit.ts";

const CheckSchema = z.object({ ok: z.boolean(), ms: z.number(), error: z.string().optional() });
const ReadySchema = z
  .object({
    status: z.enum(["ready", "not_ready"]),
    checks: z.object({ postgres: CheckSchema, redis: CheckSchema }),
  })
  .openapi("Readiness");

const QueueCountsSchema = z
  .object({
    runs: z.record(z.string(), z.number().int()),
    results: z.record(z.string(), z.number().int()),
  })
  .openapi("QueueCounts");

/**
 * Operations routes. All of them need a read token (docs/http-api.md makes no exception; Prometheus
 * and most probes can send a bearer token). A container healthcheck without a token can use
 * a TCP check of the port.
 */
export function registerOpsRoutes(app: RouteApp, ctx: RouteContext): void {
  const { db, redis, queues, registry } = ctx.deps;
  const startedAt = Date.now();

  app.openapi(
    guarded(
      ctx,
      tableRoute("getHealth", {
        method: "get",
        path: "/healthz",
        tags: ["Operations"],
        summary: "Liveness: the process answers",
        responses: {
          200: jsonResponse(z.object({ status: z.literal("ok"), uptime_seconds: z.number() }), "Alive."),
          ...errorResponses(401, 403),
        },
      }),
    ),
    (c) =>
      c.json({ status: "ok" as const, uptime_seconds: Math.round((Date.now() - startedAt) / 1000) }, 200),
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("getReadiness", {
        method: "get",
        path: "/readyz",
        tags: ["Operations"],
        summary: "Readiness: Postgres and Redis reachable",
        responses: {
          200: jsonResponse(ReadySchema, "Both reachable."),
          503: jsonResponse(ReadySchema, "At least one is unreachable."),
          ...errorResponses(401, 403),
        },
      }),
    ),
    async (c) => {
      const limit = ctx.options.readyTimeoutMs;
      const [postgres, redisCheck] = await Promise.all([
        check(() => withTimeout(pingDatabase(db), limit, "Postgres")),
        check(() => withTimeout(redis.ping(), limit, "Redis")),
      ]);
      const ready = postgres.ok && redisCheck.ok;
      const body = {
        status: ready ? ("ready" as const) : ("not_ready" as const),
        checks: { postgres, redis: redisCheck },
      };
      return ready ? c.json(body, 200) : c.json(body, 503);
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("getMetrics", {
        method: "get",
        path: "/metrics",
        tags: ["Operations"],
        summary: "Prometheus metrics",
        description:
          "Queue depths by state, run outcomes and transitions (from events), run duration histogram (ended runs), pending decisions, lease owners, HTTP latency by route and status, open streams.",
        responses: {
          200: {
            description: "Prometheus text exposition format.",
            content: { "text/plain": { schema: { type: "string" } } },
          },
          ...errorResponses(401, 403),
        },
      }),
    ),
    async (c) => {
      const { contentType, body } = await ctx.metrics.render();
      // Prometheus text is not JSON; the route's typed responses only describe zod (JSON) bodies.
      return c.body(body, 200, { "Content-Type": contentType }) as never;
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("listWorkers", {
        method: "get",
        path: "/api/v1/workers",
        tags: ["Cluster"],
        summary: "Live workers (heartbeats)",
        responses: {
          200: jsonResponse(
            z.object({ workers: z.array(WorkerSchema), stale_after_ms: z.number().int() }),
            "Workers that beat recently.",
          ),
          ...errorResponses(401, 403, 503),
        },
      }),
    ),
    async (c) => {
      const workers = await withTimeout(
        registry.list(ctx.options.workerStaleAfterMs),
        ctx.options.readyTimeoutMs,
        "Redis",
      );
      return c.json(
        { workers: workers.map(workerView), stale_after_ms: ctx.options.workerStaleAfterMs },
        200,
      );
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("listQueues", {
        method: "get",
        path: "/api/v1/queues",
        tags: ["Cluster"],
        summary: "Job counts of the run and result queues, by state",
        responses: {
          200: jsonResponse(QueueCountsSchema, "Counts by state."),
          ...errorResponses(401, 403, 503),
        },
      }),
    ),
    async (c) => c.json(await withTimeout(queues.counts(), ctx.options.readyTimeoutMs, "Redis"), 200),
  );
}

async function check(probe: () => Promise<unknown>): Promise<{ ok: boolean; ms: number; error?: string }> {
  const started = performance.now();
  try {
    await probe();
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    return {
      ok: false,
      ms: Math.round(performance.now() - started),
      error: (error as Error).message.slice(0, 300),
    };
  }
}
