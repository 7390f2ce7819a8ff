// Two-way status, operator side: tracker updates listed (filters, pages, source kind), a dead
// letter sent again once however often asked, and the intake and delivery figures on /metrics
// (tracker updates by status with attempts and failures, items taken, webhooks stored and
// refused), all read from and written to real Postgres.
import {
  createIntakeSource,
  recordIntakeDelivery,
  recordIntakeItem,
  recordTrackerUpdateOutcome,
  startTrackerUpdateAttempt,
} from "@overseer/db";
import { beforeAll, describe, expect, it } from "vitest";
import { seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture({ metricsCacheMs: 0 });
const SECRET_ENV = "OVERSEER_TEST_TRACKER_UPDATE_ROUTES_SECRET";
const ids: Record<"started" | "pr_opened" | "done", string> = { started: "", pr_opened: "", done: "" };

async function attempt(id: string, status: "pending" | "delivered" | "dead", error: string | null) {
  await startTrackerUpdateAttempt(fx.scratch.db, id);
  await recordTrackerUpdateOutcome(fx.scratch.db, id, { status, error });
}

beforeAll(async () => {
  await seedProject(fx, "tracked");
  await createIntakeSource(fx.scratch.db, {
    id: "src_tracked",
    projectId: "tracked",
    kind: "github",
    baseUrl: null,
    query: { container: "acme/app" },
    config: {},
    tokenEnv: "OVERSEER_TEST_TRACKER_UPDATE_ROUTES_TOKEN",
    webhookSecretEnv: SECRET_ENV,
    createdBy: "test",
  });
  await recordIntakeItem(fx.scratch.db, {
    sourceId: "src_tracked",
    issueId: "7",
    issueKey: "acme/app#7",
    projectId: "tracked",
    taskId: "acme-app-7",
    commentCursor: null,
  });
  for (const moment of ["started", "pr_opened", "done"] as const) {
    const row = await fx.scratch.db
      .insertInto("tracker_updates")
      .values({
        key: `src_tracked:7:${moment}:first`,
        source_id: "src_tracked",
        issue_id: "7",
        project_id: "tracked",
        task_id: "acme-app-7",
        moment,
        occurrence: "first",
        event_id: null,
        data: JSON.stringify({}),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    ids[moment] = String(row.id);
  }
  await attempt(ids.started, "pending", "GitHub 502");
  await attempt(ids.started, "delivered", null); // 2 attempts, 1 failed
  await attempt(ids.pr_opened, "pending", "GitHub 403: rate limited");
  await attempt(ids.pr_opened, "dead", "GitHub 403: rate limited"); // a dead letter, 2 failed
  await recordIntakeDelivery(fx.scratch.db, {
    sourceId: "src_tracked",
    deliveryId: "d-1",
    issueId: "7",
    what: "issue",
  });
});

describe("tracker update routes", () => {
  it("lists updates newest first with status, attempts, last error and the source's kind", async () => {
    const all = await fx.request("GET", "/api/v1/intake/updates?project_id=tracked", {
      token: fx.tokens.read,
    });
    expect(all.status, all.text).toBe(200);
    expect(all.body.updates.map((u: { moment: string }) => u.moment)).toEqual([
      "done",
      "pr_opened",
      "started",
    ]);
    expect(all.body.updates[1]).toMatchObject({
      id: ids.pr_opened,
      key: "src_tracked:7:pr_opened:first",
      kind: "github",
      task_id: "acme-app-7",
      status: "dead",
      attempts: 2,
      last_error: "GitHub 403: rate limited",
      delivered_at: null,
    });
    expect(all.body.next_before).toBeNull();
    const dead = await fx.request("GET", "/api/v1/intake/updates?status=dead&source_id=src_tracked", {
      token: fx.tokens.read,
    });
    expect(dead.body.updates.map((u: { id: string }) => u.id)).toEqual([ids.pr_opened]);
    const page = await fx.request("GET", "/api/v1/intake/updates?project_id=tracked&limit=2", {
      token: fx.tokens.read,
    });
    expect(page.body.updates).toHaveLength(2);
    expect(page.body.next_before).toBe(ids.pr_opened);
    const older = await fx.request(
      "GET",
      `/api/v1/intake/updates?project_id=tracked&before=${page.body.next_before}`,
      { token: fx.tokens.read },
    );
    expect(older.body.updates.map((u: { id: string }) => u.id)).toEqual([ids.started]);
    const bad = await fx.request("GET", "/api/v1/intake/updates?status=lost", { token: fx.tokens.read });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("pending, delivered, dead");
  });

  it("sends a dead update again once, however often asked; read tokens cannot, unknown ids are 404", async () => {
    const path = `/api/v1/intake/updates/${ids.pr_opened}/redeliver`;
    const refused = await fx.request("POST", path, { token: fx.tokens.read });
    expect(refused.status).toBe(403);
    const first = await fx.request("POST", path, { token: fx.tokens.operate });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      redelivered: true,
      update: { id: ids.pr_opened, status: "pending", attempts: 0, last_error: null },
    });
    const second = await fx.request("POST", path, { token: fx.tokens.operate });
    expect(second.body).toMatchObject({ redelivered: false, update: { status: "pending" } });
    const delivered = await fx.request("POST", `/api/v1/intake/updates/${ids.started}/redeliver`, {
      token: fx.tokens.operate,
    });
    expect(delivered.body).toMatchObject({ redelivered: false, update: { status: "delivered" } });
    const missing = await fx.request("POST", "/api/v1/intake/updates/999999/redeliver", {
      token: fx.tokens.operate,
    });
    expect(missing.status).toBe(404);
    expect(missing.text).toContain("overseer intake updates");
    const notAnId = await fx.request("POST", "/api/v1/intake/updates/x1/redeliver", {
      token: fx.tokens.operate,
    });
    expect(notAnId.status).toBe(400);
    // Dead again, for the metrics below.
    await attempt(ids.pr_opened, "dead", "GitHub 403: rate limited");
  });

  it("lists a source's stored webhook deliveries and when the last came", async () => {
    const listed = await fx.request("GET", "/api/v1/projects/tracked/intake/sources", {
      token: fx.tokens.read,
    });
    expect(listed.body.sources[0]).toMatchObject({ id: "src_tracked", items_taken: 1, webhooks_received: 1 });
    expect(Date.parse(listed.body.sources[0].last_webhook_at)).toBeGreaterThan(Date.now() - 600_000);
  });

  it("reports tracker updates, intake items, stored and refused webhooks on /metrics", async () => {
    process.env[SECRET_ENV] = "tracker-update-routes-secret";
    try {
      const forged = await fx.request("POST", "/api/v1/intake/sources/src_tracked/webhook", {
        rawBody: JSON.stringify({ action: "opened", issue: { number: 7 } }),
        headers: {
          "content-type": "application/json",
          "x-github-event": "issues",
          "x-github-delivery": "d-2",
          "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
        },
      });
      expect(forged.status).toBe(401);
    } finally {
      delete process.env[SECRET_ENV];
    }
    const unset = await fx.request("POST", "/api/v1/intake/sources/src_tracked/webhook", {
      rawBody: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(unset.status).toBe(503);
    const res = await fx.request("GET", "/metrics", { token: fx.tokens.read });
    expect(res.status).toBe(200);
    expect(res.text).toContain('overseer_tracker_updates{project="tracked",status="delivered"} 1');
    expect(res.text).toContain('overseer_tracker_updates{project="tracked",status="dead"} 1');
    expect(res.text).toContain('overseer_tracker_updates{project="tracked",status="pending"} 1');
    expect(res.text).toContain('overseer_tracker_update_attempts_total{project="tracked"} 3');
    expect(res.text).toContain('overseer_tracker_update_failures_total{project="tracked"} 2');
    expect(res.text).toContain('overseer_intake_items{project="tracked",kind="github"} 1');
    expect(res.text).toContain('overseer_intake_webhook_deliveries{project="tracked",kind="github"} 1');
    expect(res.text).toContain('overseer_intake_webhooks_refused_total{reason="bad_signature"} 1');
    expect(res.text).toContain('overseer_intake_webhooks_refused_total{reason="webhooks_not_configured"} 1');
    expect(res.text).toContain("# TYPE overseer_tracker_update_failures_total counter");
  });
});
