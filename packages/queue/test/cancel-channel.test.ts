import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRedis,
  LiveChannel,
  type LiveEvent,
  type Redis,
  resolveLiveOptions,
  subscribeWhenReady,
} from "../src/index.ts";

/**
 * Issue 22: a worker listens only to its own runs' cancellations. A run's `run.cancelled`
 * event reaches that run's cancel channel, and no other event does, against real Redis.
 */
const prefix = `canceltest-${randomBytes(4).toString("hex")}`;
let redis: Redis;
let subscriber: Redis;
let live: LiveChannel;

beforeAll(() => {
  const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  redis = createRedis(url);
  subscriber = createRedis(url);
  live = new LiveChannel(redis, resolveLiveOptions({ prefix }));
});
afterAll(() => {
  redis.disconnect();
  subscriber.disconnect();
});

const event = (id: number, type: string, runId: string | null): LiveEvent => ({
  id: String(id),
  projectId: "p1",
  taskId: "S00-001",
  runId,
  type,
  data: {},
  createdAt: new Date(0).toISOString(),
});

describe("run cancel channel", () => {
  it("carries the held run's run.cancelled event only, and names the run", async () => {
    const received: { channel: string; message: string }[] = [];
    subscriber.on("message", (channel: string, message: string) => received.push({ channel, message }));
    await subscribeWhenReady(subscriber, live.cancelChannel("run-a"));
    await live.publishEvents([
      event(1, "run.started", "run-a"),
      event(2, "run.cancelled", "run-b"),
      event(3, "task.cancelled", null),
      event(4, "run.cancelled", "run-a"),
    ]);
    await live.publishEvents([event(5, "run.finished", "run-a")]);
    // Messages arrive in publication order: the marker comes after everything published before it.
    await redis.publish(live.cancelChannel("run-a"), "marker");
    for (let i = 0; i < 100 && received.at(-1)?.message !== "marker"; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(received.map((m) => m.channel)).toEqual([
      live.cancelChannel("run-a"),
      live.cancelChannel("run-a"),
    ]);
    expect(JSON.parse(received[0]?.message ?? "{}")).toMatchObject({ id: "4", type: "run.cancelled" });
    expect(live.runOfCancelChannel(received[0]?.channel ?? "")).toBe("run-a");
    expect(live.runOfCancelChannel(live.eventsChannel("p1"))).toBeNull();
  });
});
