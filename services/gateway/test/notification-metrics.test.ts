// Notification metrics on /metrics: deliveries by status (dead letters included), attempts and
// failed attempts, read from the deliveries Postgres holds.
import {
  applyTransition,
  createSubscription,
  listDeliveries,
  recordDeliveryOutcome,
  startDeliveryAttempt,
} from "@overseer/db";
import { describe, expect, it } from "vitest";
import { seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture({ metricsCacheMs: 0 });

async function attempts(id: string, failures: number, last: "delivered" | "dead"): Promise<void> {
  for (let i = 0; i < failures; i += 1) {
    await startDeliveryAttempt(fx.scratch.db, id);
    await recordDeliveryOutcome(fx.scratch.db, id, { status: "pending", httpStatus: 503, error: "down" });
  }
  await startDeliveryAttempt(fx.scratch.db, id);
  await recordDeliveryOutcome(fx.scratch.db, id, {
    status: last,
    httpStatus: last === "delivered" ? 204 : 503,
    error: last === "delivered" ? null : "down",
  });
}

describe("notification metrics", () => {
  it("counts deliveries by status, attempts and failed attempts per project", async () => {
    await seedProject(fx, "metered");
    await createSubscription(fx.scratch.db, {
      id: "metered-hook",
      projectId: "metered",
      channel: "webhook",
      url: "http://127.0.0.1:9/hook",
      slackChannel: null,
      eventTypes: ["project.paused"],
      minSeverity: "info",
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      createdBy: "test",
    });
    for (const n of [1, 2, 3]) {
      await applyTransition(fx.scratch.db, "metered", {
        kind: "set-project-status",
        status: "paused",
        by: "test",
        reason: `budget_usd ${n} reached`,
        bound: "budget",
      });
      await applyTransition(fx.scratch.db, "metered", {
        kind: "set-project-status",
        status: "active",
        by: "test",
      });
    }
    const rows = (await listDeliveries(fx.scratch.db, { projectId: "metered", limit: 10 })).reverse();
    expect(rows).toHaveLength(3);
    const [first, second] = rows;
    if (!first || !second) return;
    await attempts(first.id, 2, "delivered"); // 3 attempts, 2 failed
    await attempts(second.id, 1, "dead"); // 2 attempts, both failed: a dead letter
    const res = await fx.request("GET", "/metrics", { token: fx.tokens.read });
    expect(res.status).toBe(200);
    expect(res.text).toContain('overseer_notification_deliveries{project="metered",status="delivered"} 1');
    expect(res.text).toContain('overseer_notification_deliveries{project="metered",status="dead"} 1');
    expect(res.text).toContain('overseer_notification_deliveries{project="metered",status="pending"} 1');
    expect(res.text).toContain('overseer_notification_delivery_attempts_total{project="metered"} 5');
    expect(res.text).toContain('overseer_notification_delivery_failures_total{project="metered"} 4');
    expect(res.text).toContain("# TYPE overseer_notification_delivery_failures_total counter");
  });
});
