import { pingDatabase } from "@overseer/db";
import { ApiError } from "../../http/api-error.ts";
import { withTimeout } from "../../http/with-timeout.ts";
import { poolQueueCounts } from "../../operations/pool-queue-counts.ts";
import { workerView } from "../../views/resource-views.ts";
import type { GatewayHandler, RouteContext } from "../route-kit.ts";
import type {
  drainWorkerRoute,
  getHealthRoute,
  getMetricsRoute,
  getReadinessRoute,
  listQueuesRoute,
  listWorkersRoute,
} from "./definitions.ts";

/** Liveness, with the uptime since `startedAt` (epoch ms). */
export function getHealth(startedAt: number): GatewayHandler<typeof getHealthRoute> {
  return (c) =>
    c.json({ status: "ok" as const, uptime_seconds: Math.round((Date.now() - startedAt) / 1000) }, 200);
}

export function getReadiness({ deps, options }: RouteContext): GatewayHandler<typeof getReadinessRoute> {
  return async (c) => {
    const limit = options.readyTimeoutMs;
    const [postgres, redisCheck] = await Promise.all([
      check(() => withTimeout(pingDatabase(deps.db), limit, "Postgres")),
      check(() => withTimeout(deps.redis.ping(), limit, "Redis")),
    ]);
    const ready = postgres.ok && redisCheck.ok;
    const body = {
      status: ready ? ("ready" as const) : ("not_ready" as const),
      checks: { postgres, redis: redisCheck },
    };
    return ready ? c.json(body, 200) : c.json(body, 503);
  };
}

export function getMetrics({ metrics }: RouteContext): GatewayHandler<typeof getMetricsRoute> {
  return async (c) => {
    const { contentType, body } = await metrics.render();
    // Prometheus text is not JSON; the route's typed responses only describe zod (JSON) bodies.
    return c.body(body, 200, { "Content-Type": contentType }) as never;
  };
}

export function listWorkers({ deps, options }: RouteContext): GatewayHandler<typeof listWorkersRoute> {
  return async (c) => {
    const workers = await withTimeout(
      deps.registry.list(options.workerStaleAfterMs),
      options.readyTimeoutMs,
      "Redis",
    );
    return c.json({ workers: workers.map(workerView), stale_after_ms: options.workerStaleAfterMs }, 200);
  };
}

export function drainWorker({ deps, options }: RouteContext): GatewayHandler<typeof drainWorkerRoute> {
  return async (c) => {
    const { worker_id: id } = c.req.valid("param");
    const redis = <T>(work: Promise<T>) => withTimeout(work, options.readyTimeoutMs, "Redis");
    const workers = await redis(deps.registry.list(options.workerStaleAfterMs));
    const worker = workers.find((w) => w.id === id);
    if (!worker)
      throw new ApiError(
        404,
        "not_found",
        `No live worker ${id}: overseer workers (GET /api/v1/workers) lists the workers that beat in the last ${options.workerStaleAfterMs} ms.`,
      );
    const now = Date.now();
    await redis(deps.registry.requestDrain(id, now));
    return c.json({ worker: workerView(worker), requested_at: new Date(now).toISOString() }, 202);
  };
}

export function listQueues({ deps, options }: RouteContext): GatewayHandler<typeof listQueuesRoute> {
  return async (c) =>
    c.json(await poolQueueCounts(deps, options.workerStaleAfterMs, options.readyTimeoutMs), 200);
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
