import { applyTransition, createApiToken, ProjectStatusRefusedError, revokeApiToken } from "@overseer/db";
import { describe, expect, it } from "vitest";
import {
  card,
  createGatewayFixture,
  seedProject,
  useGatewayFixture,
  useRaisedQuestion,
} from "./support/gateway-fixture.ts";

const fx = useGatewayFixture({ accessLogSample: 1 });
useRaisedQuestion(fx, "auth");

/** Routes of each family for the revocation check (every route × scope is the generated table test's). */
const ROUTES = [
  { method: "GET", path: () => "/api/projects/auth/status" },
  { method: "GET", path: () => "/api/projects/auth/snapshot?compact=true" },
  { method: "GET", path: () => "/api/v1/projects" },
];

describe("authentication and scopes", () => {
  it("answers 401 to a malformed Authorization header", async () => {
    const basic = await fx.request("GET", "/api/v1/projects", {
      token: null,
      headers: { Authorization: "Basic YWRtaW46YWRtaW4=" },
    });
    expect(basic.status).toBe(401);
    expect(basic.body.error.code).toBe("invalid_token");
    expect(basic.headers.get("www-authenticate")).toContain("Bearer");
  });

  it("an operate token cannot take a stopped project out of stopped; an admin can (issue 19, hole 1)", async () => {
    await seedProject(fx, "halted", [card("S00-001")]);
    const stop = await fx.request("POST", "/api/v1/projects/halted/stop", {
      token: fx.tokens.admin,
      body: {},
    });
    expect(stop.status).toBe(200);
    const undo = [
      { path: "/api/v1/projects/halted/resume", body: {} },
      { path: "/api/v1/projects/halted/start", body: {} },
      { path: "/api/v1/projects/halted/pause", body: {} },
      { path: "/api/v1/projects/halted/mission", body: { objective: "Run again" } },
    ];
    for (const { path, body } of undo) {
      const res = await fx.request("POST", path, { token: fx.tokens.operate, body });
      expect(res.status, path).toBe(403);
      expect(res.body.error).toMatchObject({
        code: "forbidden",
        details: { required_scope: "admin", token_scope: "operate", project_status: "stopped" },
      });
      const project = await fx.request("GET", "/api/v1/projects/halted", { token: fx.tokens.read });
      expect(project.body.status, path).toBe("stopped");
    }
    const resumed = await fx.request("POST", "/api/v1/projects/halted/resume", {
      token: fx.tokens.admin,
      body: {},
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.project.status).toBe("active");
    // Out of stopped, operate may pause and resume again.
    const paused = await fx.request("POST", "/api/v1/projects/halted/pause", {
      token: fx.tokens.operate,
      body: {},
    });
    expect(paused.body.project.status).toBe("paused");
  });

  it("re-checks the project's state inside the transition: a stop after the guard's check holds", async () => {
    await seedProject(fx, "raced", [card("S00-001")]);
    await applyTransition(fx.scratch.db, "raced", {
      kind: "set-project-status",
      status: "stopped",
      by: "admin",
    });
    // What the guard leaves for an operate token on resume: every state but stopped.
    const refused = applyTransition(
      fx.scratch.db,
      "raced",
      { kind: "set-project-status", status: "active", by: "api:operator" },
      { projectStatusIn: ["active", "paused", "completed"] },
    );
    await expect(refused).rejects.toBeInstanceOf(ProjectStatusRefusedError);
    const row = await fx.scratch.db
      .selectFrom("projects")
      .select("status")
      .where("id", "=", "raced")
      .executeTakeFirst();
    expect(row?.status).toBe("stopped");
  });

  it("refuses a revoked token (401)", async () => {
    const local = await createGatewayFixture({ tokenCacheTtlMs: 0 });
    try {
      const created = await createApiToken(local.scratch.db, { name: "temp", scope: "admin" });
      expect((await local.request("GET", "/api/v1/projects", { token: created.token })).status).toBe(200);
      await revokeApiToken(local.scratch.db, created.id);
      for (const route of ROUTES.slice(0, 3)) {
        const res = await local.request(route.method, route.path(), { token: created.token });
        expect(res.status).toBe(401);
      }
    } finally {
      await local.close();
    }
  });

  it("serves the web app's pages and assets without a token, no external asset, scripts only from itself", async () => {
    for (const path of ["/", "/docs"]) {
      const res = await fx.request("GET", path, { token: null });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/html");
      expect(res.text).not.toMatch(/(src|href)="(https?:)?\/\//);
      expect(res.text).not.toContain("ovr_");
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/script-src[^;]*unsafe/);
      const assets = [...res.text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] ?? "");
      expect(assets.length).toBeGreaterThan(0);
      for (const asset of assets) {
        const a = await fx.request("GET", asset, { token: null });
        expect(a.status).toBe(200);
        expect(a.headers.get("cache-control")).toContain("immutable");
      }
    }
    expect((await fx.request("GET", "/assets/missing.js", { token: null })).status).toBe(404);
    expect((await fx.request("GET", "/assets/..%2F..%2Fpackage.json", { token: null })).status).toBe(401);
  });

  it("accepts access_token only on GET stream routes, and never logs it", async () => {
    const onList = await fx.request("GET", `/api/v1/projects?access_token=${fx.tokens.read}`, {
      token: null,
    });
    expect(onList.status).toBe(401);
    const claimed = await import("@overseer/db").then(({ applyTransition }) =>
      applyTransition(fx.scratch.db, "auth", { kind: "claim" }),
    );
    const runId = claimed.changes.runs[0]?.id ?? "";
    await import("@overseer/db").then(({ applyTransition }) =>
      applyTransition(
        fx.scratch.db,
        "auth",
        { kind: "submit", runId, message: "m", commitSha: null, branchHead: null },
        { runReport: { output: "out" } },
      ),
    );
    const stream = await fx.request("GET", `/api/runs/${runId}/log/stream?access_token=${fx.tokens.read}`, {
      token: null,
    });
    expect(stream.status).toBe(200);
    expect(stream.text).toContain("event: end");
    const wrongScope = await fx.request(
      "POST",
      `/api/runs/${runId}/log/stream?access_token=${fx.tokens.admin}`,
      { token: null },
    );
    expect(wrongScope.status).toBe(401);
    const logs = fx.logLines.join("");
    for (const token of Object.values(fx.tokens)) expect(logs).not.toContain(token);
    expect(logs).toContain('"route":"/api/runs/:id/log/stream"');
    expect(logs).not.toContain("access_token");
  });
});

describe("request guards", () => {
  it("echoes a valid X-Request-Id and generates one otherwise", async () => {
    const echoed = await fx.request("GET", "/healthz", { headers: { "X-Request-Id": "trace-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("trace-123");
    const generated = await fx.request("GET", "/healthz", {
      headers: { "X-Request-Id": "bad id with spaces\u0001" },
    });
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const absent = await fx.request("GET", "/nowhere");
    expect(absent.status).toBe(404);
    expect(absent.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(absent.body.error.code).toBe("not_found");
  });

  it("limits writes per token with 429 and Retry-After; reads and other tokens are not limited", async () => {
    const local = await createGatewayFixture({ rateLimitWritesPerMinute: 3 });
    try {
      await seedProject(local, "rl", [card("S00-001")]);
      const write = (token: string) =>
        local.request("POST", "/api/v1/projects/rl/pause", { token, body: {} });
      for (let i = 0; i < 3; i++) expect((await write(local.tokens.operate)).status).toBe(200);
      const limited = await write(local.tokens.operate);
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe("rate_limited");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(
        (await local.request("GET", "/api/projects/rl/status", { token: local.tokens.operate })).status,
      ).toBe(200);
      expect((await write(local.tokens.admin)).status).toBe(200);
    } finally {
      await local.close();
    }
  });

  it("keeps CORS closed unless origins are configured", async () => {
    const preflight = { "Access-Control-Request-Method": "POST", Origin: "https://ops.example.com" };
    const closed = await fx.request("OPTIONS", "/api/v1/projects", { token: null, headers: preflight });
    expect(closed.headers.get("access-control-allow-origin")).toBeNull();
    const plain = await fx.request("GET", "/api/v1/projects", {
      headers: { Origin: "https://ops.example.com" },
    });
    expect(plain.headers.get("access-control-allow-origin")).toBeNull();

    const open = await createGatewayFixture({ corsOrigins: ["https://ops.example.com"] });
    try {
      const allowed = await open.request("OPTIONS", "/api/v1/projects", { token: null, headers: preflight });
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get("access-control-allow-origin")).toBe("https://ops.example.com");
      expect(allowed.headers.get("access-control-allow-headers")).toContain("Authorization");
      const other = await open.request("OPTIONS", "/api/v1/projects", {
        token: null,
        headers: { ...preflight, Origin: "https://evil.example.com" },
      });
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await open.close();
    }
  });

  it("sets protective headers on API answers", async () => {
    const res = await fx.request("GET", "/api/v1/projects");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  });
});
