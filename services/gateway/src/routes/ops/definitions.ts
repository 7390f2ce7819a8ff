import { z } from "@hono/zod-openapi";
import { WorkerDrainSchema, WorkerListSchema } from "@overseer/api-contract";
import { errorResponses, jsonResponse, tableRoute } from "../route-kit.ts";

/**
 * Operations routes. All of them need a read token (docs/http-api.md makes no exception; Prometheus
 * and most probes can send a bearer token). A container healthcheck without a token can use
 * a TCP check of the port.
 */

const CheckSchema = z.object({ ok: z.boolean(), ms: z.number(), error: z.string().optional() });
const ReadySchema = z
  .object({
    status: z.enum(["ready", "not_ready"]),
    checks: z.object({ postgres: CheckSchema, redis: CheckSchema }),
  })
  .openapi("Readiness");

const QueueCountsSchema = z
  .object({
    runs: z.record(z.string(), z.number().int()).openapi({
      description: "Run jobs by state, summed over every worker pool.",
    }),
    pools: z.record(z.string(), z.record(z.string(), z.number().int())).openapi({
      description:
        "Run jobs by state per worker pool: `default`, each pool a queued or running run needs, and each pool a live worker serves.",
      example: { default: { waiting: 2, active: 4 }, jdk: { waiting: 3, active: 0 } },
    }),
    results: z.record(z.string(), z.number().int()),
  })
  .openapi("QueueCounts");

export const getHealthRoute = tableRoute("getHealth", {
  method: "get",
  path: "/healthz",
  tags: ["Operations"],
  summary: "Liveness: the process answers",
  responses: {
    200: jsonResponse(z.object({ status: z.literal("ok"), uptime_seconds: z.number() }), "Alive."),
    ...errorResponses(401, 403),
  },
});

export const getReadinessRoute = tableRoute("getReadiness", {
  method: "get",
  path: "/readyz",
  tags: ["Operations"],
  summary: "Readiness: Postgres and Redis reachable",
  responses: {
    200: jsonResponse(ReadySchema, "Both reachable."),
    503: jsonResponse(ReadySchema, "At least one is unreachable."),
    ...errorResponses(401, 403),
  },
});

export const getMetricsRoute = tableRoute("getMetrics", {
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
});

export const listWorkersRoute = tableRoute("listWorkers", {
  method: "get",
  path: "/api/v1/workers",
  tags: ["Cluster"],
  summary: "Live workers (heartbeats)",
  responses: {
    200: jsonResponse(WorkerListSchema, "Workers that beat recently: pools, slots, running runs, draining."),
    ...errorResponses(401, 403, 503),
  },
});

export const drainWorkerRoute = tableRoute("drainWorker", {
  method: "post",
  path: "/api/v1/workers/{worker_id}/drain",
  tags: ["Cluster"],
  summary: "Drain one worker: it takes no new job, finishes its runs and stops",
  description:
    "The worker sees the request at its next heartbeat and stops as on SIGTERM: no new job (its pools count it out at once), running runs finish within its OVERSEER_WORKER_DRAIN_MS and the rest are handed back to the queue, then it exits 0. An orchestrator that restarts it (compose `restart: unless-stopped`) brings up a fresh worker; scale the service down to remove it.",
  request: { params: z.object({ worker_id: z.string().min(1).max(200) }) },
  responses: {
    202: jsonResponse(WorkerDrainSchema, "Asked; the worker drains at its next heartbeat."),
    ...errorResponses(401, 403, 404, 503),
  },
});

export const listQueuesRoute = tableRoute("listQueues", {
  method: "get",
  path: "/api/v1/queues",
  tags: ["Cluster"],
  summary: "Job counts of the run and result queues, by state",
  responses: {
    200: jsonResponse(QueueCountsSchema, "Counts by state."),
    ...errorResponses(401, 403, 503),
  },
});
