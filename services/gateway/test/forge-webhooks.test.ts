import { createHmac } from "node:crypto";
import { createRequire } from "node:module";
import type { WebhookDefinition } from "@octokit/webhooks-examples";
import { sign } from "@octokit/webhooks-methods";
import { listUnappliedForgeDeliveries, markForgeDeliveryApplied } from "@overseer/db";
import { beforeAll, describe, expect, it } from "vitest";
import { seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const SECRET = "webhook-secret-for-tests";
const fx = useGatewayFixture({ forgeWebhookSecret: SECRET });
const unconfigured = useGatewayFixture();

/** GitHub's recorded webhook examples (`@octokit/webhooks-examples`), by event name. */
const examples = createRequire(import.meta.url)("@octokit/webhooks-examples") as WebhookDefinition[];
function example(name: string, action?: string): Record<string, unknown> {
  const definition = examples.find((d) => d.name === name);
  const found = definition?.examples.find((e) => !action || (e as { action?: string }).action === action);
  if (!found) throw new Error(`No ${name} ${action ?? ""} example in @octokit/webhooks-examples.`);
  return found as unknown as Record<string, unknown>;
}

const path = (forge: string, project = "hooks") => `/api/v1/forge/${project}/webhooks/${forge}`;

async function github(body: string, delivery: string, event: string, signature?: string) {
  return fx.request("POST", path("github"), {
    token: null,
    rawBody: body,
    headers: {
      "Content-Type": "application/json",
      "X-GitHub-Delivery": delivery,
      "X-GitHub-Event": event,
      "X-Hub-Signature-256": signature ?? (await sign(SECRET, body)),
    },
  });
}

beforeAll(async () => {
  await seedProject(fx, "hooks");
});

describe("POST /api/v1/forge/{id}/webhooks/{forge}", () => {
  it("stores a signed GitHub delivery once by its id, with a clear applied_at", async () => {
    const body = JSON.stringify(example("pull_request", "opened"));
    const first = await github(body, "d-1", "pull_request");
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ forge: "github", delivery_id: "d-1", event: "pull_request", stored: true });
    const again = await github(body, "d-1", "pull_request");
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ stored: false });
    const rows = await listUnappliedForgeDeliveries(fx.scratch.db, "hooks", 10);
    expect(rows.map((r) => [r.forge, r.delivery_id, r.event, r.action, r.applied_at])).toEqual([
      ["github", "d-1", "pull_request", "opened", null],
    ]);
    expect(rows[0]?.payload).toEqual(JSON.parse(body));
    expect(await markForgeDeliveryApplied(fx.scratch.db, "github", "d-1")).toBe(true);
    expect(await markForgeDeliveryApplied(fx.scratch.db, "github", "d-1")).toBe(false);
    expect(await listUnappliedForgeDeliveries(fx.scratch.db, "hooks", 10)).toEqual([]);
  });

  it("stores each recorded example of the events the loop reads", async () => {
    const events = [
      "check_run",
      "status",
      "pull_request_review",
      "pull_request_review_comment",
      "pull_request_review_thread",
    ];
    for (const [i, event] of events.entries()) {
      const response = await github(JSON.stringify(example(event)), `e-${i}`, event);
      expect(response.status, event).toBe(202);
    }
    const rows = await listUnappliedForgeDeliveries(fx.scratch.db, "hooks", 50);
    expect(rows.map((r) => r.event)).toEqual(events);
  });

  it("refuses a bad or missing signature (401) and a malformed body (400), storing nothing", async () => {
    const before = (await listUnappliedForgeDeliveries(fx.scratch.db, "hooks", 100)).length;
    const body = JSON.stringify(example("pull_request", "closed"));
    const forged = await github(body, "bad-1", "pull_request", await sign("another-secret", body));
    expect(forged.status).toBe(401);
    expect(forged.body).toMatchObject({
      error: { code: "bad_signature", message: expect.stringContaining("X-Hub-Signature-256".toLowerCase()) },
    });
    const tampered = await github(
      `${body.slice(0, -1)}, "extra": 1}`,
      "bad-2",
      "pull_request",
      await sign(SECRET, body),
    );
    expect(tampered.status).toBe(401);
    const unsigned = await fx.request("POST", path("github"), {
      token: null,
      rawBody: body,
      headers: {
        "Content-Type": "application/json",
        "X-GitHub-Delivery": "bad-3",
        "X-GitHub-Event": "pull_request",
      },
    });
    expect(unsigned.status).toBe(401);
    const notJson = await github("not json", "bad-4", "pull_request");
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({
      error: { code: "invalid_delivery", message: expect.stringContaining("not a JSON object") },
    });
    const noId = await fx.request("POST", path("github"), {
      token: null,
      rawBody: body,
      headers: {
        "Content-Type": "application/json",
        "X-GitHub-Event": "pull_request",
        "X-Hub-Signature-256": await sign(SECRET, body),
      },
    });
    expect(noId.status).toBe(400);
    expect((await listUnappliedForgeDeliveries(fx.scratch.db, "hooks", 100)).length).toBe(before);
  });

  it("answers 404 for an unknown project once the signature holds", async () => {
    const body = JSON.stringify(example("pull_request", "opened"));
    const response = await fx.request("POST", path("github", "nosuch"), {
      token: null,
      rawBody: body,
      headers: {
        "Content-Type": "application/json",
        "X-GitHub-Delivery": "n-1",
        "X-GitHub-Event": "pull_request",
        "X-Hub-Signature-256": await sign(SECRET, body),
      },
    });
    expect(response.status).toBe(404);
  });

  it("takes GitLab deliveries by X-Gitlab-Token and Gitea deliveries by their HMAC", async () => {
    const mr = JSON.stringify({
      object_kind: "merge_request",
      event_type: "merge_request",
      object_attributes: { iid: 1, action: "open", source_branch: "overseer/task/T-1" },
    });
    const gitlab = (token: string, id: string) =>
      fx.request("POST", path("gitlab"), {
        token: null,
        rawBody: mr,
        headers: {
          "Content-Type": "application/json",
          "X-Gitlab-Event": "Merge Request Hook",
          "X-Gitlab-Event-UUID": id,
          "X-Gitlab-Token": token,
        },
      });
    expect((await gitlab(SECRET, "g-1")).body).toMatchObject({ forge: "gitlab", stored: true });
    expect((await gitlab(SECRET, "g-1")).body).toMatchObject({ stored: false });
    expect((await gitlab("wrong", "g-2")).status).toBe(401);

    const pr = JSON.stringify({
      action: "opened",
      number: 1,
      pull_request: { number: 1, head: { ref: "overseer/task/T-1" } },
    });
    const gitea = (signature: string, id: string) =>
      fx.request("POST", path("gitea"), {
        token: null,
        rawBody: pr,
        headers: {
          "Content-Type": "application/json",
          "X-Gitea-Event": "pull_request",
          "X-Gitea-Delivery": id,
          "X-Gitea-Signature": signature,
        },
      });
    const hmac = createHmac("sha256", SECRET).update(pr).digest("hex");
    expect((await gitea(hmac, "t-1")).body).toMatchObject({ forge: "gitea", stored: true });
    expect((await gitea(createHmac("sha256", "x").update(pr).digest("hex"), "t-2")).status).toBe(401);
    const rows = await listUnappliedForgeDeliveries(fx.scratch.db, "hooks", 100);
    expect(rows.filter((r) => r.forge !== "github").map((r) => [r.forge, r.delivery_id, r.action])).toEqual([
      ["gitlab", "g-1", "open"],
      ["gitea", "t-1", "opened"],
    ]);
  });

  it("refuses every delivery with 503 while no secret is configured", async () => {
    await seedProject(unconfigured, "hooks");
    const response = await unconfigured.request("POST", path("github"), {
      token: null,
      rawBody: "{}",
      headers: {
        "Content-Type": "application/json",
        "X-GitHub-Delivery": "u-1",
        "X-GitHub-Event": "ping",
        "X-Hub-Signature-256": "sha256=00",
      },
    });
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({
      error: { message: expect.stringContaining("OVERSEER_FORGE_WEBHOOK_SECRET") },
    });
  });
});
