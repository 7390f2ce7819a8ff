import { describe, expect, it } from "vitest";
import { createGatewayApp, type GatewayApp } from "../src/index.ts";
import { useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

/** Opens a board session with `token`; returns the response and the cookie pair to send back. */
async function openSession(app: GatewayApp, token: string) {
  const res = await app.request("/api/v1/admin/queues/session", {
    method: "POST",
    headers: { Authorization: `Bearer ${token}` },
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
    expect(body.queues.map((q) => q.name).sort()).toEqual(["results", "runs"]);
  });

  it("an expired session is refused", async () => {
    const shortLived = createGatewayApp(fx.deps, { processMetrics: false, boardSessionTtlMs: 50 });
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
});
