/**
 * "waiting for a worker in pool X" (views/pool-waiting.ts): worked out when the status is read,
 * from the live workers' heartbeats in Redis and the project's queued runs in Postgres.
 */
import { applyTransition } from "@overseer/db";
import type { WorkerHeartbeat } from "@overseer/queue";
import { describe, expect, it, vi } from "vitest";
import { card, seedProject, statusWhen, useGatewayFixture } from "./support/gateway-fixture.ts";

const STATUS_CACHE_MS = 300;
const fx = useGatewayFixture({ statusCacheTtlMs: STATUS_CACHE_MS });

function heartbeat(id: string, pools: string[], draining = false): WorkerHeartbeat {
  const now = Date.now();
  return {
    id,
    host: "box",
    pid: 1,
    slots: 2,
    pools,
    draining,
    sandbox: "bwrap",
    unsafe: false,
    currentJobs: [],
    startedAt: now,
    heartbeatAt: now,
  };
}

describe("a project whose pool has no live worker", () => {
  it("shows waiting for a worker in its pool while it has queued runs, until a live worker of the pool beats", async () => {
    await seedProject(fx, "jdkproj", [card("S00-001")], { pool: "jdk" });
    await fx.deps.registry.beat(heartbeat("plain", ["default"]));
    const idle = await statusWhen(fx, "jdkproj", (s) => s.pool === "jdk");
    // Nothing queued yet: nothing waits.
    expect(idle.body.pool_waiting).toBeNull();

    await applyTransition(fx.scratch.db, "jdkproj", { kind: "claim" });
    const waiting = await statusWhen(fx, "jdkproj", (s) => s.running.length === 1);
    expect(waiting.body.pool_waiting).toBe("waiting for a worker in pool jdk");
    expect(waiting.body.text).toContain("pool: jdk");
    expect(waiting.body.text).toContain("waiting for a worker in pool jdk");

    // A draining worker of the pool takes no new job: still waiting (once its heartbeat is read:
    // the heartbeats are read at most once per statusCacheTtlMs).
    await fx.deps.registry.beat(heartbeat("jdk-old", ["jdk"], true));
    await new Promise((resolve) => setTimeout(resolve, STATUS_CACHE_MS));
    const draining = await fx.request("GET", "/api/projects/jdkproj/status", { token: fx.tokens.read });
    expect(draining.body.pool_waiting).toBe("waiting for a worker in pool jdk");

    await fx.deps.registry.beat(heartbeat("jdk-1", ["default", "jdk"]));
    const served = await statusWhen(fx, "jdkproj", (s) => s.pool_waiting === null);
    expect(served.body.text).not.toContain("waiting for a worker");

    const workers = await fx.request("GET", "/api/v1/workers", { token: fx.tokens.read });
    expect(
      workers.body.workers.map((w: { id: string; pools: string[]; draining: boolean }) => [
        w.id,
        w.pools,
        w.draining,
      ]),
    ).toEqual([
      ["jdk-1", ["default", "jdk"], false],
      ["jdk-old", ["jdk"], true],
      ["plain", ["default"], false],
    ]);
  });

  it("a default-pool project with a live default worker never waits", async () => {
    await seedProject(fx, "plainproj", [card("S00-001")]);
    await fx.deps.registry.beat(heartbeat("plain", ["default"]));
    await applyTransition(fx.scratch.db, "plainproj", { kind: "claim" });
    const status = await statusWhen(fx, "plainproj", (s) => s.running.length === 1);
    expect(status.body.pool).toBe("default");
    expect(status.body.pool_waiting).toBeNull();
    expect(status.body.text).not.toContain("pool");
  });

  it("status requests share one read of the heartbeats for statusCacheTtlMs", async () => {
    await seedProject(fx, "sharedpools", [card("S00-001")], { pool: "jdk" });
    await fx.deps.registry.beat(heartbeat("jdk-2", ["jdk"]));
    await new Promise((resolve) => setTimeout(resolve, STATUS_CACHE_MS));
    const reads = vi.spyOn(fx.deps.registry, "list");
    try {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          fx.request("GET", "/api/projects/sharedpools/status", { token: fx.tokens.read }),
        ),
      );
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });
});
