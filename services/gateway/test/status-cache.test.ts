import { applyTransition } from "@overseer/db";
import { importTasks, TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import {
  card,
  type GatewayFixture,
  notificationsDelivered,
  raiseQuestion,
  seedProject,
  useGatewayFixture,
} from "./support/gateway-fixture.ts";

/**
 * The status cache never serves an answer older than a change the caller made through the
 * gateway, shows other processes' changes once notified (notify mode), and validates each
 * request against the project's change token when the gateway does not LISTEN (token mode).
 */
const notify = useGatewayFixture();
const token = useGatewayFixture({}, { listen: false });

const get = (fx: GatewayFixture, id: string) =>
  fx.request("GET", `/api/projects/${id}/status`, { token: fx.tokens.read });

describe("status cache", () => {
  it("serves the same answer while nothing changes", async () => {
    await seedProject(notify, "same", [card("S00-001")]);
    // The notifications of the seeding writes drop the entry; nothing changes after they arrived.
    await notificationsDelivered(notify);
    const a = await get(notify, "same");
    const b = await get(notify, "same");
    expect(b.text).toBe(a.text);
    expect(notify.app.settings.statusCacheTtlMs).toBeGreaterThan(0);
  });

  it("shows a change made through the gateway on the very next request (own writes)", async () => {
    await seedProject(notify, "own", [card("S00-001")]);
    const q = await raiseQuestion(notify, "own");
    await expect.poll(async () => (await get(notify, "own")).body.pending_count, { timeout: 5000 }).toBe(1);
    const resolved = await notify.request("POST", `/api/projects/own/decisions/${q.decisionId}/resolve`, {
      token: notify.tokens.operate,
      body: { option_id: "use_postgres" },
    });
    expect(resolved.status).toBe(200);
    const after = await get(notify, "own");
    expect(after.body.pending_count).toBe(0);
    expect(after.body.waiting_for_you).toBeNull();
  });

  it("notify mode: another process's transition and task import show once notified", async () => {
    await seedProject(notify, "other", [card("S00-001")]);
    expect((await get(notify, "other")).body.counts.total).toBe(1);
    await importTasks(new TransitionApplier({ db: notify.scratch.db }), "other", [card("S00-002")]);
    await expect.poll(async () => (await get(notify, "other")).body.counts.total, { timeout: 5000 }).toBe(2);
    await applyTransition(notify.scratch.db, "other", { kind: "claim" });
    await expect
      .poll(async () => (await get(notify, "other")).body.running.length, { timeout: 5000 })
      .toBe(1);
  });

  it("token mode: another process's transition shows on the very next request", async () => {
    await seedProject(token, "tok", [card("S00-001"), card("S00-002")]);
    expect((await get(token, "tok")).body.pending_count).toBe(0);
    await raiseQuestion(token, "tok");
    expect((await get(token, "tok")).body.pending_count).toBe(1);
    await applyTransition(token.scratch.db, "tok", { kind: "claim" });
    expect((await get(token, "tok")).body.running).toHaveLength(1);
    expect((await get(token, "nope")).status).toBe(404);
  });
});
