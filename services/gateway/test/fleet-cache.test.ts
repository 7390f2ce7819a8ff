import path from "node:path";
import type { Db } from "@overseer/db";
import { startProject, TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGatewayApp, type GatewayApp, resolveGatewayOptions } from "../src/index.ts";
import { card, notificationsDelivered, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

/**
 * The fleet overview's pollers share one answer (`fleetCacheMs`): at 5,000 projects, ten
 * requests a second, each reading the whole fleet, took the gateway's whole event loop while the
 * projects started, and status requests waited ~56 s behind them. Each read now re-reads only
 * the projects that changed (live/fleet-answer.ts). Counted here: fleet statements the gateway
 * sends to Postgres.
 */
const fx = useGatewayFixture();

/** A gateway over the fixture's deps whose database counts the fleet statements it sends. */
function countingGateway(fleetCacheMs: number): { app: () => GatewayApp; fleetReads: () => number } {
  let reads = 0;
  let app: GatewayApp | undefined;
  beforeAll(() => {
    const db = fx.scratch.db.withPlugin({
      transformQuery: ({ node }) => {
        const text = (node as { sqlFragments?: readonly string[] }).sqlFragments?.join(" ") ?? "";
        if (text.includes("AS ended_ms")) reads++;
        return node;
      },
      transformResult: async ({ result }) => result,
    }) as Db;
    app = createGatewayApp(
      { ...fx.deps, db },
      resolveGatewayOptions({ processMetrics: false, dataDir: path.join(fx.tempDir, "gw2"), fleetCacheMs }),
    );
  });
  afterAll(async () => {
    await app?.shutdown();
  });
  return { app: () => app as GatewayApp, fleetReads: () => reads };
}

const cached = countingGateway(3_600_000);
const uncached = countingGateway(0);

async function fleet(
  app: GatewayApp,
  token: string,
): Promise<{ projects: { id: string; status: string }[] }> {
  const res = await app.request("/api/v1/fleet", { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { projects: { id: string; status: string }[] };
}

describe("fleet answer cache", () => {
  it("reads the fleet once for every poller, through a burst of other processes' transitions", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `burst-${i}`);
    for (const id of ids) await seedProject(fx, id, [card("S00-001")]);
    await notificationsDelivered(fx);
    const applier = new TransitionApplier({ db: fx.scratch.db });
    const read = fx.tokens.read;
    // 30 concurrent polls while 20 projects are paused and restarted (40 transitions, 40 NOTIFYs).
    const [answers] = await Promise.all([
      Promise.all(Array.from({ length: 30 }, () => fleet(cached.app(), read))),
      Promise.all(
        ids.map(async (id) => {
          await applier.apply(id, {
            kind: "set-project-status",
            status: "paused",
            by: "test",
            reason: "burst",
          });
          await startProject(applier, id, { by: "test" });
        }),
      ),
    ]);
    await notificationsDelivered(fx);
    for (let i = 0; i < 30; i++) await fleet(cached.app(), read);
    expect(cached.fleetReads()).toBe(1);
    expect(answers.every((a) => a.projects.length === answers[0]?.projects.length)).toBe(true);
    // Without the cache, each request reads what changed since the read before it: once the
    // burst is read, nothing (the notifications mark what changed, live/fleet-answer.ts).
    await fleet(uncached.app(), read);
    const readsBefore = uncached.fleetReads();
    const again = await Promise.all(Array.from({ length: 5 }, () => fleet(uncached.app(), read)));
    expect(uncached.fleetReads()).toBe(readsBefore);
    expect(again[4]?.projects.filter((p) => p.id.startsWith("burst-")).map((p) => p.status)).toEqual(
      ids.map(() => "active"),
    );
  });

  it("shows another process's transition once its notification arrived, reading only that project", async () => {
    await seedProject(fx, "other-fleet", [card("S00-001")]);
    await notificationsDelivered(fx);
    const app = uncached.app();
    expect((await fleet(app, fx.tokens.read)).projects.find((p) => p.id === "other-fleet")?.status).toBe(
      "active",
    );
    const readsBefore = uncached.fleetReads();
    await new TransitionApplier({ db: fx.scratch.db }).apply("other-fleet", {
      kind: "set-project-status",
      status: "paused",
      by: "test",
      reason: "elsewhere",
    });
    await notificationsDelivered(fx);
    const after = await fleet(app, fx.tokens.read);
    expect(after.projects.find((p) => p.id === "other-fleet")?.status).toBe("paused");
    expect(uncached.fleetReads()).toBe(readsBefore + 1);
  });

  it("shows a change made through this gateway on the next request (own writes)", async () => {
    await seedProject(fx, "own-fleet", [card("S00-001")]);
    const app = cached.app();
    // The cached answer is from before the project existed.
    expect((await fleet(app, fx.tokens.read)).projects.some((p) => p.id === "own-fleet")).toBe(false);
    const readsBefore = cached.fleetReads();
    const paused = await app.request("/api/v1/projects/own-fleet/pause", {
      method: "POST",
      headers: { Authorization: `Bearer ${fx.tokens.operate}`, "Content-Type": "application/json" },
      body: "{}",
    });
    expect(paused.status).toBe(200);
    const after = await fleet(app, fx.tokens.read);
    expect(cached.fleetReads()).toBe(readsBefore + 1);
    expect(after.projects.find((p) => p.id === "own-fleet")?.status).toBe("paused");
  });
});
