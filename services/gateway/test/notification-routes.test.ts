// Notification routes: subscriptions (add, list, remove, test, rotate) and deliveries (list,
// redeliver a dead letter), against a receiver that verifies with the `standardwebhooks` library.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { applyTransition, recordDeliveryOutcome, startDeliveryAttempt } from "@overseer/db";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

/** Verifies every POST with the secrets it holds; records what verified and what did not. */
class Receiver {
  secrets: string[] = [];
  readonly verified: { id: string; payload: { type: string; data: Record<string, unknown> } }[] = [];
  refused = 0;
  readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      for (const secret of this.secrets) {
        try {
          const payload = new Webhook(secret).verify(
            body,
            headers,
          ) as Receiver["verified"][number]["payload"];
          this.verified.push({ id: String(headers["webhook-id"]), payload });
          res.writeHead(204).end();
          return;
        } catch {}
      }
      this.refused += 1;
      res.writeHead(400).end();
    });
  });
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
}

const receiver = new Receiver();
beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.server.listen(0, "127.0.0.1", resolve));
  await seedProject(fx, "hooked");
});
afterAll(() => new Promise<void>((resolve) => receiver.server.close(() => resolve())));

async function subscribe(body: Record<string, unknown>) {
  const created = await fx.request("POST", "/api/v1/notifications/subscriptions", {
    token: fx.tokens.admin,
    body: { url: receiver.url, ...body },
  });
  expect(created.status, created.text).toBe(201);
  return created.body as { subscription: { id: string }; secret: string };
}

describe("subscriptions", () => {
  it("an admin adds one with filters; the secret is shown once and never listed", async () => {
    const { subscription, secret } = await subscribe({
      project_id: "hooked",
      event_types: ["project.paused", "incident.recorded"],
      min_severity: "warning",
    });
    expect(secret).toMatch(/^whsec_/);
    expect(subscription).toMatchObject({
      project_id: "hooked",
      channel: "webhook",
      url: receiver.url,
      event_types: ["project.paused", "incident.recorded"],
      min_severity: "warning",
      created_by: "api:admin",
    });
    const listed = await fx.request("GET", "/api/v1/notifications/subscriptions?project_id=hooked", {
      token: fx.tokens.read,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.subscriptions.map((s: { id: string }) => s.id)).toContain(subscription.id);
    expect(listed.text).not.toContain(secret);
    const refused = await fx.request("POST", "/api/v1/notifications/subscriptions", {
      token: fx.tokens.operate,
      body: { url: receiver.url },
    });
    expect(refused.status).toBe(403);
  });

  it("refuses a bad filter, a non-http URL and an unknown project, saying what was wrong", async () => {
    const post = (body: unknown) =>
      fx.request("POST", "/api/v1/notifications/subscriptions", { token: fx.tokens.admin, body });
    const badType = await post({ url: receiver.url, event_types: ["task.done"] });
    expect(badType.status).toBe(400);
    expect(badType.body.error.message).toContain("event_types");
    expect(badType.body.error.message).toContain("decision.opened");
    const badUrl = await post({ url: "file:///etc/passwd" });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.error.message).toContain("http:// or https://");
    const withCredentials = await post({ url: "https://user:pw@hooks.example/x" });
    expect(withCredentials.status).toBe(400);
    const unknown = await post({ url: receiver.url, project_id: "nowhere" });
    expect(unknown.status).toBe(404);
  });

  it("a Slack channel is a subscription without a signing secret; exactly one of url and slack_channel", async () => {
    const post = (body: unknown) =>
      fx.request("POST", "/api/v1/notifications/subscriptions", { token: fx.tokens.admin, body });
    const created = await post({ slack_channel: "C0123456789", project_id: "hooked" });
    expect(created.status, created.text).toBe(201);
    expect(created.body.secret).toBeNull();
    expect(created.body.subscription).toMatchObject({
      channel: "slack",
      url: null,
      slack_channel: "C0123456789",
      project_id: "hooked",
      secrets: [],
    });
    const row = await fx.scratch.db
      .selectFrom("notification_subscriptions")
      .select(["channel", "slack_channel", "url"])
      .where("id", "=", created.body.subscription.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ channel: "slack", slack_channel: "C0123456789", url: null });
    const both = await post({ url: receiver.url, slack_channel: "C0123456789" });
    expect(both.status).toBe(400);
    expect(both.body.error.message).toContain("exactly one of url");
    const neither = await post({ project_id: "hooked" });
    expect(neither.status).toBe(400);
    expect(neither.body.error.message).toContain("exactly one of url");
    const badChannel = await post({ slack_channel: "#general" });
    expect(badChannel.status).toBe(400);
    expect(badChannel.body.error.message).toContain("Slack channel id such as C0123456789");
  });

  it("test sends a signed overseer.test message; a rotation keeps the previous secret signing until the overlap ends", async () => {
    const { subscription, secret } = await subscribe({});
    const test = (token = fx.tokens.operate) =>
      fx.request("POST", `/api/v1/notifications/subscriptions/${subscription.id}/test`, { token });
    receiver.secrets = [secret];
    const first = await test();
    expect(first.body).toMatchObject({ ok: true, status: 204, error: null });
    expect(receiver.verified.at(-1)).toMatchObject({
      id: first.body.webhook_id,
      payload: { type: "overseer.test", data: { subscription_id: subscription.id, project_id: null } },
    });
    const rotated = await fx.request(
      "POST",
      `/api/v1/notifications/subscriptions/${subscription.id}/rotate-secret`,
      { token: fx.tokens.admin, body: { overlap_seconds: 3600 } },
    );
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.secret).not.toBe(secret);
    expect(rotated.body.subscription.secrets).toHaveLength(2);
    expect(Date.parse(rotated.body.previous_expire_at)).toBeGreaterThan(Date.now() + 3000_000);
    // The receiver still holds the old secret only: it verifies during the overlap.
    expect((await test()).body.ok).toBe(true);
    receiver.secrets = [rotated.body.secret];
    expect((await test()).body.ok).toBe(true);
    // Without an overlap the old secret stops signing at once.
    const now = await fx.request(
      "POST",
      `/api/v1/notifications/subscriptions/${subscription.id}/rotate-secret`,
      {
        token: fx.tokens.admin,
        body: { overlap_seconds: 0 },
      },
    );
    expect(now.body.subscription.secrets).toHaveLength(1);
    expect(now.body.previous_expire_at).toBeNull();
    const refusedBefore = receiver.refused;
    expect((await test()).body).toMatchObject({ ok: false, status: 400 });
    expect(receiver.refused).toBe(refusedBefore + 1);
    receiver.secrets = [now.body.secret];
    expect((await test()).body.ok).toBe(true);
  });

  it("removes one once; a second removal is a 404 naming how to list them", async () => {
    const { subscription } = await subscribe({});
    const path = `/api/v1/notifications/subscriptions/${subscription.id}`;
    expect((await fx.request("DELETE", path, { token: fx.tokens.admin })).body).toEqual({
      removed: true,
      id: subscription.id,
    });
    const again = await fx.request("DELETE", path, { token: fx.tokens.admin });
    expect(again.status).toBe(404);
    expect(again.body.error.message).toContain("overseer notify list");
  });
});

describe("deliveries", () => {
  it("lists a notification's delivery; a dead letter is redelivered once however often it is asked", async () => {
    await seedProject(fx, "paged");
    const { subscription } = await subscribe({ project_id: "paged", event_types: ["project.paused"] });
    await applyTransition(fx.scratch.db, "paged", {
      kind: "set-project-status",
      status: "paused",
      by: "test",
      reason: "budget_usd 1 reached",
      bound: "budget",
    });
    const list = await fx.request(
      "GET",
      `/api/v1/notifications/deliveries?subscription_id=${subscription.id}`,
      { token: fx.tokens.read },
    );
    expect(list.status).toBe(200);
    expect(list.body.deliveries).toHaveLength(1);
    const delivery = list.body.deliveries[0];
    expect(delivery).toMatchObject({
      project_id: "paged",
      type: "project.paused",
      severity: "warning",
      status: "pending",
      attempts: 0,
      webhook_id: expect.stringMatching(/^msg_/),
    });
    // The coordinator's last attempt failed: a dead letter (the rows it writes).
    await startDeliveryAttempt(fx.scratch.db, delivery.id);
    await recordDeliveryOutcome(fx.scratch.db, delivery.id, {
      status: "dead",
      httpStatus: 503,
      error: "the receiver answered HTTP 503",
    });
    const dead = await fx.request("GET", "/api/v1/notifications/deliveries?status=dead&project_id=paged", {
      token: fx.tokens.read,
    });
    expect(dead.body.deliveries).toEqual([
      expect.objectContaining({ id: delivery.id, status: "dead", attempts: 1, last_status: 503 }),
    ]);
    const redeliver = () =>
      fx.request("POST", `/api/v1/notifications/deliveries/${delivery.id}/redeliver`, {
        token: fx.tokens.operate,
      });
    const first = await redeliver();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      redelivered: true,
      delivery: {
        id: delivery.id,
        status: "pending",
        attempts: 0,
        last_error: null,
        webhook_id: delivery.webhook_id,
      },
    });
    const second = await redeliver();
    expect(second.body).toMatchObject({ redelivered: false, delivery: { status: "pending" } });
    const missing = await fx.request("POST", "/api/v1/notifications/deliveries/999999/redeliver", {
      token: fx.tokens.operate,
    });
    expect(missing.status).toBe(404);
    const bad = await fx.request("POST", "/api/v1/notifications/deliveries/abc/redeliver", {
      token: fx.tokens.operate,
    });
    expect(bad.status).toBe(400);
  });

  it("pages newest first with next_before", async () => {
    const page = await fx.request("GET", "/api/v1/notifications/deliveries?limit=1", {
      token: fx.tokens.read,
    });
    expect(page.status).toBe(200);
    expect(page.body.deliveries.length).toBeLessThanOrEqual(1);
    const bad = await fx.request("GET", "/api/v1/notifications/deliveries?status=lost", {
      token: fx.tokens.read,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("pending, delivered, dead");
  });
});
