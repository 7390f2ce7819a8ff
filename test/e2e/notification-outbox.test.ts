/**
 * The notification outbox under failure (README "Intake and notifications"), with real
 * processes, Postgres and Redis: a coordinator SIGKILLed while deliveries back off, then a Redis
 * FLUSHALL, lose nothing and deliver nothing twice. The receiver verifies every message with the
 * `standardwebhooks` library and is down (503) until the end.
 */
import { createSubscription, listDeliveries } from "@overseer/db";
import type { Command } from "@overseer/domain";
import { TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { useTestResources } from "../support/cluster-fixture.ts";
import { startPrivateRedis } from "../support/private-redis.ts";
import { waitFor } from "../support/wait-for.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const resources = useTestResources();

/** A start, then a pause at the budget bound: one `project.paused` notification. */
async function budgetPause(transitions: TransitionApplier, projectId: string, n: number): Promise<void> {
  const start: Command = { kind: "start-project", by: "test", stage: null, sessionsLimit: null };
  await transitions.apply(projectId, start);
  await transitions.apply(projectId, {
    kind: "set-project-status",
    status: "paused",
    by: "test",
    reason: `budget_usd ${n} reached`,
    bound: "budget",
  });
}

describe("notification outbox failures", () => {
  it("a coordinator SIGKILLed mid-retry and a Redis FLUSHALL: every notification is delivered once, in order per project", async () => {
    const redis = await startPrivateRedis();
    resources.onRelease(redis.stop);
    const receiver = await WebhookReceiver.start(SECRET);
    resources.onRelease(() => receiver.stop());
    receiver.up = false;
    const cluster = await resources.cluster({ redisUrl: redis.url });
    const db = cluster.scratch.db;
    const transitions = new TransitionApplier({ db });
    for (const id of ["n1", "n2"]) await cluster.addProject({ id, tasks: [], start: false });
    await createSubscription(db, {
      id: "hook",
      projectId: null,
      channel: "webhook",
      url: receiver.url,
      slackChannel: null,
      eventTypes: [],
      minSeverity: "info",
      secret: SECRET,
      createdBy: "test",
    });
    const env = cluster.env({ OVERSEER_NOTIFY_BACKOFF_MS: "100", OVERSEER_NOTIFY_ATTEMPTS: "60" });
    const first = resources.service("coordinator", { ...env, OVERSEER_COORDINATOR_ID: "doomed" });
    for (let n = 1; n <= 3; n += 1) {
      await budgetPause(transitions, "n1", n);
      await budgetPause(transitions, "n2", n);
    }
    // Both streams' heads are being retried (the receiver answers 503) when the coordinator dies.
    await waitFor("retries under way", async () => {
      const rows = await listDeliveries(db, { limit: 50 });
      return rows.filter((r) => r.attempts >= 2).length >= 2;
    });
    await first.kill("SIGKILL");
    await cluster.redis.flushall();
    for (let n = 4; n <= 5; n += 1) await budgetPause(transitions, "n1", n);
    resources.service("coordinator", { ...env, OVERSEER_COORDINATOR_ID: "survivor" });
    receiver.up = true;
    const all = await waitFor(
      "every delivery delivered",
      async () => {
        const rows = await listDeliveries(db, { limit: 50 });
        return rows.length === 8 && rows.every((r) => r.status === "delivered") ? rows : undefined;
      },
      60_000,
    );
    expect(receiver.turnedAway).toBeGreaterThanOrEqual(4);
    expect(receiver.refused).toBe(0);
    expect(receiver.duplicates).toBe(0);
    expect(receiver.accepted.map((a) => a.id).sort()).toEqual(all.map((r) => r.webhook_id).sort());
    for (const projectId of ["n1", "n2"]) {
      const got = receiver.ofProject(projectId);
      const eventIds = got.map((a) => Number(a.payload.data.event_id));
      expect(eventIds, `${projectId} in event order`).toEqual([...eventIds].sort((a, b) => a - b));
      expect(got.map((a) => a.payload.data.reason)).toEqual(
        (projectId === "n1" ? [1, 2, 3, 4, 5] : [1, 2, 3]).map((n) => `budget_usd ${n} reached`),
      );
      expect(got.every((a) => a.payload.type === "project.paused")).toBe(true);
    }
  });
});
