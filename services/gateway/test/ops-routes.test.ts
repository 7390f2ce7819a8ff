import { acquireLeases, applyTransition, connectDatabase } from "@overseer/db";
import {
  createRedis,
  LiveChannel,
  RunQueues,
  resolveLiveOptions,
  resolveQueueOptions,
  WorkerRegistry,
} from "@overseer/queue";
import { describe, expect, it } from "vitest";
import { createGatewayApp, resolveGatewayOptions } from "../src/index.ts";
import { card, raiseQuestion, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture({ metricsCacheMs: 0 });

describe("health and readiness", () => {
  it("healthz and readyz answer with a read token", async () => {
    const health = await fx.request("GET", "/healthz", { token: fx.tokens.read });
    expect(health.status).toBe(200);
    expect(health.body.status).toBe("ok");
    const ready = await fx.request("GET", "/readyz", { token: fx.tokens.read });
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: "ready",
      checks: { postgres: { ok: true }, redis: { ok: true } },
    });
  });

  it("readyz answers 503 naming the unreachable dependency; Redis-backed routes answer 503, not 500", async () => {
    const deadRedis = createRedis("redis://127.0.0.1:1", {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    deadRedis.on("error", () => undefined);
    const deadDb = connectDatabase(fx.scratch.url.replace(/\/[^/]+$/, "/overseer_no_such_database"), {
      max: 1,
    });
    const app = createGatewayApp(
      {
        ...fx.deps,
        redis: deadRedis,
        queues: new RunQueues(deadRedis, resolveQueueOptions({ prefix: "dead" })),
        live: new LiveChannel(deadRedis, resolveLiveOptions({ prefix: "dead" })),
        registry: new WorkerRegistry(deadRedis, "dead"),
      },
      resolveGatewayOptions({ readyTimeoutMs: 1000, processMetrics: false }),
    );
    const mixed = createGatewayApp(
      { ...fx.deps, db: deadDb.db },
      resolveGatewayOptions({ readyTimeoutMs: 1000, processMetrics: false }),
    );
    try {
      const auth = { Authorization: `Bearer ${fx.tokens.read}` };
      const res = await app.request("/readyz", { headers: auth });
      expect(res.status).toBe(503);
      const body = (await res.json()) as { status: string; checks: { redis: { error?: string } } };
      expect(body).toMatchObject({
        status: "not_ready",
        checks: { postgres: { ok: true }, redis: { ok: false } },
      });
      expect(body.checks.redis.error).toBeTruthy();
      const workers = await app.request("/api/v1/workers", { headers: auth });
      expect(workers.status).toBe(503);
      expect(((await workers.json()) as { error: { code: string } }).error.code).toBe("unavailable");

      // With Postgres gone even the token cannot be checked: 503, not 500 nor 401.
      const noDb = await mixed.request("/readyz", { headers: auth });
      expect(noDb.status).toBe(503);
    } finally {
      await app.shutdown();
      await mixed.shutdown();
      deadRedis.disconnect();
      await deadDb.close();
    }
  });
});

describe("metrics", () => {
  it("exposes queue depths, run outcomes and durations, transitions, pending cards, leases and HTTP latency", async () => {
    await seedProject(fx, "m", [card("S00-001"), card("S00-002")]);
    await raiseQuestion(fx, "m");
    const claimed = await applyTransition(fx.scratch.db, "m", { kind: "claim" });
    const runId = claimed.changes.runs[0]?.id ?? "";
    await applyTransition(
      fx.scratch.db,
      "m",
      { kind: "submit", runId, message: "done", commitSha: null, branchHead: null },
      { runReport: { durationMs: 42_000, output: "x" } },
    );
    await acquireLeases(fx.scratch.db, "coordinator-a", 60_000);
    await fx.deps.queues.runs.add("run", { x: 1 }, { jobId: "run-metrics-probe" });
    await fx.request("GET", "/api/projects/m/status", { token: fx.tokens.read });

    const res = await fx.request("GET", "/metrics", { token: fx.tokens.read });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = res.text;
    expect(text).toContain('overseer_queue_jobs{queue="runs",state="waiting"} 1');
    expect(text).toContain('overseer_run_outcomes_total{outcome="finished",transition="submit"} 1');
    expect(text).toContain('overseer_run_outcomes_total{outcome="finished",transition="escalate"} 1');
    expect(text).toContain('overseer_run_duration_seconds_bucket{le="30"} 0');
    expect(text).toContain('overseer_run_duration_seconds_bucket{le="60"} 1');
    expect(text).toContain("overseer_run_duration_seconds_count 1");
    expect(text).toContain("overseer_run_duration_seconds_sum 42");
    expect(text).toMatch(/overseer_transition_events_total\{type="decision.created"\} 1/);
    expect(text).toContain('overseer_pending_decisions{project="m"} 1');
    expect(text).toContain('overseer_project_lease{project="m",owner="coordinator-a"} 1');
    expect(text).toContain("overseer_lease_owners 1");
    expect(text).toMatch(
      /overseer_http_request_duration_seconds_count\{method="GET",route="\/api\/projects\/:id\/status",status="200"\} \d+/,
    );
    expect(text).toContain('overseer_metrics_source_up{source="postgres"} 1');

    await fx.request("POST", "/api/projects/m/message", { token: fx.tokens.operate, body: { text: "go" } });
    const after = await fx.request("GET", "/metrics", { token: fx.tokens.read });
    expect(after.text).toContain(
      'overseer_gateway_operator_transitions_total{kind="answer",outcome="applied"} 1',
    );
    expect(after.text).not.toContain('overseer_pending_decisions{project="m"} 1');
  });
});
