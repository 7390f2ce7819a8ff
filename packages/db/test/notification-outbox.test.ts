/**
 * The notification outbox (migration 0013) against a real Postgres: outbox rows and their
 * deliveries are written by the transition that appends the events, filtered per subscription,
 * and served one stream head at a time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeSecrets,
  applyTransition,
  createProject,
  createScratchDatabase,
  createSubscription,
  listDeliveries,
  listEvents,
  loadDeliveryWork,
  pendingStreamHeads,
  recordDeliveryOutcome,
  redeliver,
  rotateSubscriptionSecret,
  type ScratchDatabase,
  startDeliveryAttempt,
} from "../src/index.ts";

let scratch: ScratchDatabase;

beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

const subscription = (id: string, fields: Partial<Parameters<typeof createSubscription>[1]> = {}) =>
  createSubscription(scratch.db, {
    id,
    projectId: null,
    channel: "webhook",
    url: `http://127.0.0.1:9/${id}`,
    slackChannel: null,
    eventTypes: [],
    minSeverity: "info",
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    createdBy: "test",
    ...fields,
  });

/** A start then a pause at the budget bound: one `project.paused` (warning) notification. */
async function budgetPause(projectId: string) {
  await applyTransition(scratch.db, projectId, {
    kind: "start-project",
    by: "op",
    stage: null,
    sessionsLimit: null,
  });
  const paused = await applyTransition(scratch.db, projectId, {
    kind: "set-project-status",
    status: "paused",
    by: "coordinator-1",
    reason: "budget_usd 1 reached",
    bound: "budget",
  });
  return paused;
}

async function outboxOf(projectId: string) {
  return scratch.db
    .selectFrom("notification_outbox")
    .selectAll()
    .where("project_id", "=", projectId)
    .orderBy("id")
    .execute();
}

describe("the notification outbox", () => {
  it("a transition writes one outbox row per notified event, pointing at the event, with its deliveries", async () => {
    await createProject(scratch.db, { id: "ob1", repo: "/tmp/none", runnerConfig: {} });
    await subscription("all");
    await subscription("ob1-only", { projectId: "ob1" });
    await createProject(scratch.db, { id: "ob2", repo: "/tmp/none", runnerConfig: {} });
    await subscription("other-project", { projectId: "ob2" });
    await subscription("criticals", { minSeverity: "critical" });
    await subscription("prs-only", { eventTypes: ["pr.opened"] });
    await subscription("paused-only", { eventTypes: ["project.paused"], minSeverity: "warning" });
    const paused = await budgetPause("ob1");
    const outbox = await outboxOf("ob1");
    expect(outbox.map((o) => [o.type, o.severity])).toEqual([["project.paused", "warning"]]);
    const event = paused.eventRows.find((e) => e.type === "project.status_changed");
    expect(outbox[0]?.event_id).toBe(event?.id);
    expect(outbox[0]?.data).toMatchObject({ bound: "budget", status: "paused" });
    const deliveries = await listDeliveries(scratch.db, { projectId: "ob1", limit: 50 });
    expect(deliveries.map((d) => d.subscription_id).sort()).toEqual(["all", "ob1-only", "paused-only"]);
    expect(new Set(deliveries.map((d) => d.webhook_id)).size).toBe(3);
    expect(deliveries.every((d) => d.status === "pending" && d.attempts === 0)).toBe(true);
  });

  it("events that are not notifications write no outbox row", async () => {
    await createProject(scratch.db, { id: "quiet", repo: "/tmp/none", runnerConfig: {} });
    await applyTransition(scratch.db, "quiet", {
      kind: "start-project",
      by: "op",
      stage: null,
      sessionsLimit: null,
    });
    await applyTransition(scratch.db, "quiet", { kind: "set-project-status", status: "paused", by: "op" });
    expect((await listEvents(scratch.db, { projectId: "quiet" })).map((e) => e.type)).toContain(
      "project.status_changed",
    );
    expect(await outboxOf("quiet")).toEqual([]);
  });

  it("serves one head per (subscription, project) stream in outbox order; delivered or dead moves it on", async () => {
    await createProject(scratch.db, { id: "order", repo: "/tmp/none", runnerConfig: {} });
    await subscription("order-hook", { projectId: "order" });
    for (let i = 0; i < 3; i += 1) await budgetPause("order");
    const mine = (await listDeliveries(scratch.db, { subscriptionId: "order-hook", limit: 10 })).reverse();
    expect(mine).toHaveLength(3);
    const headOf = async () =>
      (await pendingStreamHeads(scratch.db, ["order"])).filter((h) => h.subscription_id === "order-hook");
    expect(await headOf()).toEqual([{ id: mine[0]?.id, project_id: "order", subscription_id: "order-hook" }]);
    const second = await loadDeliveryWork(scratch.db, mine[1]!.id);
    expect(second?.waitingFor).toBe(mine[0]?.id);
    expect(await startDeliveryAttempt(scratch.db, mine[0]!.id)).toBe(1);
    expect(await startDeliveryAttempt(scratch.db, mine[0]!.id)).toBe(2);
    await recordDeliveryOutcome(scratch.db, mine[0]!.id, {
      status: "delivered",
      httpStatus: 204,
      error: null,
    });
    // A late second outcome of the same delivery changes nothing.
    expect(
      await recordDeliveryOutcome(scratch.db, mine[0]!.id, { status: "dead", httpStatus: 500, error: "x" }),
    ).toBe(false);
    expect(await startDeliveryAttempt(scratch.db, mine[0]!.id)).toBeNull();
    expect((await headOf())[0]?.id).toBe(mine[1]?.id);
    await recordDeliveryOutcome(scratch.db, mine[1]!.id, { status: "dead", httpStatus: 500, error: "boom" });
    expect((await headOf())[0]?.id).toBe(mine[2]?.id);
    const dead = await listDeliveries(scratch.db, { status: "dead", subscriptionId: "order-hook", limit: 5 });
    expect(dead.map((d) => [d.id, d.last_error, d.type])).toEqual([[mine[1]?.id, "boom", "project.paused"]]);
    // Redelivering the dead letter puts it back at the head of its stream (it is older).
    expect((await redeliver(scratch.db, mine[1]!.id))?.status).toBe("pending");
    expect((await headOf())[0]?.id).toBe(mine[1]?.id);
  });

  it("a rotation signs with the new secret and keeps the previous one until the overlap ends", async () => {
    await subscription("rotating");
    const at = new Date("2026-03-01T00:00:00Z");
    const rotated = await rotateSubscriptionSecret(scratch.db, "rotating", "whsec_bmV3", 3_600_000, at);
    expect(rotated?.secrets.map((s) => s.secret)).toEqual([
      "whsec_bmV3",
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    ]);
    expect(activeSecrets(rotated?.secrets ?? [], at)).toHaveLength(2);
    const later = new Date(at.getTime() + 3_600_001);
    expect(activeSecrets(rotated?.secrets ?? [], later).map((s) => s.secret)).toEqual(["whsec_bmV3"]);
    expect(await rotateSubscriptionSecret(scratch.db, "nope", "whsec_x", 1000)).toBeUndefined();
  });
});
