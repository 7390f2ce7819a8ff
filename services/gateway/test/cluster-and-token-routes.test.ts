// Cluster routes (workers from heartbeats, queue counts) and token routes (list, create, revoke).
import { describe, expect, it } from "vitest";
import { useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

describe("cluster", () => {
  it("lists live workers from heartbeats and queue counts by state", async () => {
    const now = Date.now();
    await fx.deps.registry.beat({
      id: "w1",
      host: "box",
      pid: 42,
      slots: 2,
      pools: ["default", "jdk"],
      draining: false,
      sandbox: "bwrap",
      unsafe: false,
      currentJobs: [{ runId: "r1", projectId: "p", taskId: "S00-001", action: "execute", since: now }],
      startedAt: now - 1000,
      heartbeatAt: now,
    });
    const workers = await fx.request("GET", "/api/v1/workers", { token: fx.tokens.read });
    expect(workers.status).toBe(200);
    expect(workers.body.workers).toEqual([
      expect.objectContaining({
        id: "w1",
        host: "box",
        slots: 2,
        current_jobs: [expect.objectContaining({ run_id: "r1", task_id: "S00-001" })],
      }),
    ]);
    const queues = await fx.request("GET", "/api/v1/queues", { token: fx.tokens.read });
    expect(queues.status).toBe(200);
    expect(queues.body.runs).toMatchObject({ waiting: 0, active: 0 });
    expect(queues.body.results).toMatchObject({ waiting: 0 });
  });
});

describe("tokens", () => {
  it("admin lists, creates and revokes tokens; a revoked token is refused at once on this gateway", async () => {
    const created = await fx.request("POST", "/api/v1/tokens", { body: { name: "ci bot", scope: "read" } });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^ovr_/);
    const use = await fx.request("GET", "/api/v1/projects", { token: created.body.token });
    expect(use.status).toBe(200);
    const list = await fx.request("GET", "/api/v1/tokens");
    const row = list.body.tokens.find((t: { id: string }) => t.id === created.body.id);
    expect(row).toMatchObject({ name: "ci bot", scope: "read", revoked_at: null });
    expect(list.text).not.toContain(created.body.token);
    const revoked = await fx.request("DELETE", `/api/v1/tokens/${created.body.id}`);
    expect(revoked.body).toEqual({ revoked: true, id: created.body.id });
    const refused = await fx.request("GET", "/api/v1/projects", { token: created.body.token });
    expect(refused.status).toBe(401);
    const again = await fx.request("DELETE", `/api/v1/tokens/${created.body.id}`);
    expect(again.status).toBe(404);
    const forbidden = await fx.request("GET", "/api/v1/tokens", { token: fx.tokens.operate });
    expect(forbidden.status).toBe(403);
  });
});
