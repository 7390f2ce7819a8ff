import { createApiToken, revokeApiToken } from "@overseer/db";
import { describe, expect, it } from "vitest";
import { createGatewayApp, type GatewayApp, resolveGatewayOptions } from "../src/index.ts";
import { useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

/** Opens a board session with `token`; returns the response and the cookie pair to send back. */
async function openSession(app: GatewayApp, token: string, body?: string) {
  const res = await app.request("/api/v1/admin/queues/session", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    ...(body === undefined ? {} : { body }),
  });
  const setCookie = res.headers.get("set-cookie") ?? "";
  return { res, setCookie, cookie: setCookie.split(";")[0] ?? "" };
}

describe("Bull Board at /admin/queues", () => {
  it("refuses the board without a session, with a bearer token, or with an unknown session", async () => {
    expect((await fx.app.request("/admin/queues")).status).toBe(401);
    expect((await fx.app.request("/admin/queues/api/queues")).status).toBe(401);
    const withBearer = await fx.app.request("/admin/queues", {
      headers: { Authorization: `Bearer ${fx.tokens.admin}` },
    });
    expect(withBearer.status).toBe(401);
    const unknown = await fx.app.request("/admin/queues/api/queues", {
      headers: { Cookie: `overseer_board=${"A".repeat(43)}` },
    });
    expect(unknown.status).toBe(401);
    expect(await unknown.text()).not.toContain("<html");
  });

  it("refuses to open a session for an operator or read token", async () => {
    const operator = await openSession(fx.app, fx.tokens.operate);
    expect(operator.res.status).toBe(403);
    expect(operator.setCookie).toBe("");
    const reader = await openSession(fx.app, fx.tokens.read);
    expect(reader.res.status).toBe(403);
    const anonymous = await fx.app.request("/api/v1/admin/queues/session", { method: "POST" });
    expect(anonymous.status).toBe(401);
  });

  it("an admin session gets the board, its assets and its API listing the run and result queues", async () => {
    const { res, setCookie, cookie } = await openSession(fx.app, fx.tokens.admin);
    expect(res.status).toBe(200);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\/admin\/queues/);
    expect(setCookie).not.toContain(fx.tokens.admin);

    const page = await fx.app.request("/admin/queues", { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const html = await page.text();
    expect(html).toContain('<base href="/admin/queues/"');
    const script = /src="(static\/js\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeTruthy();
    const asset = await fx.app.request(`/admin/queues/${script}`, { headers: { Cookie: cookie } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toMatch(/javascript/);
    expect((await fx.app.request(`/admin/queues/${script}`)).status).toBe(401);

    const api = await fx.app.request("/admin/queues/api/queues", { headers: { Cookie: cookie } });
    expect(api.status).toBe(200);
    const body = (await api.json()) as { queues: { name: string }[] };
    expect(body.queues.map((q) => q.name).sort()).toEqual(["runs"]);
  });

  it("a fresh gateway builds the board once for concurrent first requests; what it does not serve is the gateway's 404", async () => {
    const fresh = createGatewayApp(fx.deps, resolveGatewayOptions({ processMetrics: false }));
    try {
      const { cookie } = await openSession(fresh, fx.tokens.admin);
      const first = await Promise.all(
        ["/admin/queues", "/admin/queues/api/queues", "/admin/queues/api/queues"].map((url) =>
          fresh.request(url, { headers: { Cookie: cookie } }),
        ),
      );
      expect(first.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(
        first.every((r) => (r.headers.get("content-security-policy") ?? "").includes("default-src")),
      ).toBe(true);
      const api = (await first[1]?.json()) as { queues: { name: string }[] };
      expect(api.queues.map((q) => q.name)).toEqual(["runs"]);
      const missing = await fresh.request("/admin/queues/no-such-route", {
        method: "POST",
        headers: { Cookie: cookie, Origin: "http://localhost" },
      });
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("not_found");
    } finally {
      await fresh.shutdown();
    }
  });

  it("an expired session is refused", async () => {
    const shortLived = createGatewayApp(
      fx.deps,
      resolveGatewayOptions({ processMetrics: false, boardSessionTtlMs: 50 }),
    );
    try {
      const { res, cookie } = await openSession(shortLived, fx.tokens.admin);
      expect(res.status).toBe(200);
      const deadline = Date.now() + 30_000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) {
        status = (await shortLived.request("/admin/queues/api/queues", { headers: { Cookie: cookie } }))
          .status;
        if (status === 200) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(401);
    } finally {
      await shortLived.shutdown();
    }
  });

  it("a session ends when its token is revoked, through the gateway or elsewhere (issue 19, hole 2)", async () => {
    for (const via of ["gateway", "postgres"] as const) {
      const admin = await createApiToken(fx.scratch.db, { name: `board-${via}`, scope: "admin" });
      const { cookie } = await openSession(fx.app, admin.token);
      const api = () => fx.app.request("/admin/queues/api/queues", { headers: { Cookie: cookie } });
      expect((await api()).status).toBe(200);
      if (via === "gateway") {
        const revoked = await fx.request("DELETE", `/api/v1/tokens/${admin.id}`, { token: fx.tokens.admin });
        expect(revoked.status).toBe(200);
      } else await revokeApiToken(fx.scratch.db, admin.id);
      const after = await api();
      expect(after.status, via).toBe(401);
      expect(await after.text()).not.toContain("<html");
      // A write of the revoked session (pausing the cluster-wide runs queue) is refused too.
      const pause = await fx.app.request("/admin/queues/api/queues/runs/pause", {
        method: "PUT",
        headers: { Cookie: cookie, Origin: "http://localhost" },
      });
      expect(pause.status, via).toBe(401);
      expect(await fx.deps.queues.runs.isPaused()).toBe(false);
    }
  });

  it("board writes need a same-origin Origin; reads do not", async () => {
    const { cookie } = await openSession(fx.app, fx.tokens.admin);
    const pause = (headers: Record<string, string>) =>
      fx.app.request("http://localhost/admin/queues/api/queues/runs/pause", {
        method: "PUT",
        headers: { Cookie: cookie, ...headers },
      });
    const foreign: Record<string, string>[] = [
      {},
      { Origin: "https://evil.example.com" },
      { Origin: "null" },
    ];
    for (const headers of foreign) {
      const refused = await pause(headers);
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("forbidden_origin");
      expect(await fx.deps.queues.runs.isPaused()).toBe(false);
    }
    const allowed = await pause({ Origin: "http://localhost" });
    expect(allowed.status).toBe(200);
    expect(await fx.deps.queues.runs.isPaused()).toBe(true);
    const resumed = await fx.app.request("http://localhost/admin/queues/api/queues/runs/resume", {
      method: "PUT",
      headers: { Cookie: cookie, Origin: "http://localhost" },
    });
    expect(resumed.status).toBe(200);
    expect(await fx.deps.queues.runs.isPaused()).toBe(false);
  });

  it("logs out: the session ends and its cookie is cleared", async () => {
    const { cookie } = await openSession(fx.app, fx.tokens.admin);
    const foreign = await fx.app.request("http://localhost/admin/queues/logout", {
      method: "POST",
      headers: { Cookie: cookie, Origin: "https://evil.example.com" },
    });
    expect(foreign.status).toBe(403);
    const out = await fx.app.request("http://localhost/admin/queues/logout", {
      method: "POST",
      headers: { Cookie: cookie, Origin: "http://localhost" },
    });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toMatch(/overseer_board=;.*Max-Age=0/i);
    expect((await fx.app.request("/admin/queues/api/queues", { headers: { Cookie: cookie } })).status).toBe(
      401,
    );
  });

  it("opening validates its body strictly and keeps one session per token", async () => {
    for (const body of ['{"ttl": 99999999}', "[]", '"x"', "null"]) {
      const bad = await openSession(fx.app, fx.tokens.admin, body);
      expect(bad.res.status, body).toBe(400);
      expect(bad.setCookie).toBe("");
    }
    const token = await createApiToken(fx.scratch.db, { name: "board-once", scope: "admin" });
    const first = await openSession(fx.app, token.token, "{}");
    expect(first.res.status).toBe(200);
    const second = await openSession(fx.app, token.token);
    expect(second.res.status).toBe(200);
    const api = (cookie: string) =>
      fx.app.request("/admin/queues/api/queues", { headers: { Cookie: cookie } });
    expect((await api(second.cookie)).status).toBe(200);
    expect((await api(first.cookie)).status).toBe(401);
    const keys = await fx.redis.keys(`${fx.prefix}:board-session:*`);
    const live = await Promise.all(keys.map((k) => fx.redis.get(k)));
    expect(live.filter((v) => v?.includes(token.id))).toHaveLength(1);
  });
});
