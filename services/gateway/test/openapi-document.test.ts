import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

const EXPECTED_OPERATIONS = [
  "get /api/projects/{id}/status",
  "get /api/projects/{id}/snapshot",
  "post /api/projects/{id}/decisions/{decision_id}/resolve",
  "post /api/projects/{id}/backlog/{item_id}/answer",
  "post /api/projects/{id}/message",
  "get /api/projects/{id}/events/stream",
  "get /api/runs/{id}/log/stream",
  "get /api/v1/projects",
  "post /api/v1/projects",
  "get /api/v1/projects/{id}",
  "patch /api/v1/projects/{id}",
  "post /api/v1/projects/{id}/pause",
  "post /api/v1/projects/{id}/resume",
  "post /api/v1/projects/{id}/stop",
  "post /api/v1/projects/{id}/mission",
  "get /api/v1/projects/{id}/tasks",
  "post /api/v1/projects/{id}/tasks",
  "post /api/v1/projects/{id}/tasks/import",
  "get /api/v1/projects/{id}/tasks/{task_id}",
  "post /api/v1/projects/{id}/tasks/{task_id}/cancel",
  "post /api/v1/projects/{id}/tasks/{task_id}/release-external",
  "get /api/v1/projects/{id}/runs",
  "get /api/v1/runs/{id}",
  "get /api/v1/runs/{id}/prompt",
  "get /api/v1/runs/{id}/log",
  "get /api/v1/projects/{id}/runs/{run_id}/transcript",
  "get /api/v1/projects/{id}/tasks/{task_id}/transcript",
  "get /api/v1/projects/{id}/events",
  "get /api/v1/projects/{id}/decisions",
  "get /api/v1/projects/{id}/decisions/{decision_id}",
  "get /api/v1/projects/{id}/incidents",
  "get /api/v1/workers",
  "get /api/v1/queues",
  "get /api/v1/tokens",
  "post /api/v1/tokens",
  "post /api/v1/workers/{worker_id}/drain",
  "post /mcp",
  "post /api/v1/admin/queues/session",
  "post /api/v1/forge/{id}/webhooks/{forge}",
  "get /api/v1/projects/{id}/intake/sources",
  "post /api/v1/projects/{id}/intake/sources",
  "delete /api/v1/projects/{id}/intake/sources/{source_id}",
  "post /api/v1/projects/{id}/intake/sources/{source_id}/test",
  "post /api/v1/intake/sources/{source_id}/webhook",
  "get /api/v1/intake/updates",
  "post /api/v1/intake/updates/{update_id}/redeliver",
  "post /api/v1/slack/interactions",
  "delete /api/v1/tokens/{token_id}",
  "get /api/v1/notifications/subscriptions",
  "post /api/v1/notifications/subscriptions",
  "delete /api/v1/notifications/subscriptions/{subscription_id}",
  "post /api/v1/notifications/subscriptions/{subscription_id}/test",
  "post /api/v1/notifications/subscriptions/{subscription_id}/rotate-secret",
  "get /api/v1/notifications/deliveries",
  "post /api/v1/notifications/deliveries/{delivery_id}/redeliver",
  "get /healthz",
  "get /readyz",
  "get /metrics",
  "get /openapi.json",
  "get /api/v1/session",
  "get /api/v1/fleet",
  "get /api/v1/decisions",
  "get /api/v1/incidents",
  "get /api/v1/stats/runs",
  "post /api/v1/projects/{id}/start",
  "get /api/v1/runs/{id}/diff",
  "get /docs",
  "get /",
];

describe("OpenAPI document", () => {
  it("is served at /openapi.json and passes swagger-parser validation", async () => {
    const res = await fx.request("GET", "/openapi.json", { token: fx.tokens.read });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    await expect(SwaggerParser.validate(structuredClone(res.body))).resolves.toBeTruthy();
    expect(res.body).toEqual(fx.app.openApiDocument());
  });

  it("describes every route, with bearer security except the page shells", () => {
    const doc = fx.app.openApiDocument() as {
      paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>;
      components: { securitySchemes: Record<string, { type: string; scheme: string }> };
      security: unknown[];
    };
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${path}`),
    );
    expect(operations.sort()).toEqual([...EXPECTED_OPERATIONS].sort());
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths["/"]?.get?.security).toEqual([]);
    expect(doc.paths["/api/projects/{id}/status"]?.get?.security).toBeUndefined();
    for (const [name, item] of Object.entries(doc.paths)) {
      for (const op of Object.values(item)) expect(Object.keys(op.responses).length, name).toBeGreaterThan(0);
    }
  });

  it("documents the id patterns that guard the paths", () => {
    const doc = fx.app.openApiDocument() as {
      paths: Record<
        string,
        Record<string, { parameters?: { name: string; schema: { pattern?: string } }[] }>
      >;
    };
    const params = doc.paths["/api/projects/{id}/backlog/{item_id}/answer"]?.post?.parameters ?? [];
    expect(params.map((p) => p.name).sort()).toEqual(["id", "item_id"]);
    for (const p of params) expect(p.schema.pattern).toBeTruthy();
  });
});

describe("OpenAPI document: missions", () => {
  it("documents the mission status on the status, snapshot and project schemas", () => {
    const doc = fx.app.openApiDocument() as {
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const schemas = doc.components.schemas;
    const mission = Object.keys(schemas.Mission?.properties ?? {});
    for (const field of [
      "objective",
      "round",
      "max_rounds",
      "state",
      "tasks",
      "spend",
      "last_evidence",
      "bound",
    ])
      expect(mission).toContain(field);
    expect(Object.keys(schemas.MissionSpend?.properties ?? {})).toEqual(
      expect.arrayContaining(["cost_usd", "budget_usd", "tokens_in", "tokens_out"]),
    );
    for (const name of ["ProjectStatus", "Snapshot", "Project"])
      expect(Object.keys(schemas[name]?.properties ?? {})).toContain("mission");
  });
});
