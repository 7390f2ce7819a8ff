import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis, type Redis, subscribeWhenReady } from "../src/index.ts";

/**
 * A subscription asked for while the connection is still in its handshake (status `connect`)
 * hears what is published once it resolved. A plain ioredis SUBSCRIBE there failed the ready
 * check and made the connection reconnect: the transcript recorder's test lost its publication
 * that way under load, and a worker could lose a run's cancel.
 */
const channel = `subscribetest-${randomBytes(4).toString("hex")}`;
let redis: Redis;

beforeAll(() => {
  redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
});
afterAll(() => {
  redis.disconnect();
});

describe("subscribeWhenReady", () => {
  it("subscribes a connection caught in its handshake without it reconnecting, and hears the next message", async () => {
    for (let round = 0; round < 10; round++) {
      const subscriber = redis.duplicate();
      const trouble: string[] = [];
      subscriber.on("error", (error: Error) => trouble.push(error.message));
      subscriber.on("reconnecting", () => trouble.push("reconnecting"));
      const heard: string[] = [];
      subscriber.on("message", (_channel: string, message: string) => heard.push(message));
      try {
        await new Promise((resolve) => subscriber.once("connect", resolve));
        expect(subscriber.status).toBe("connect");
        await subscribeWhenReady(subscriber, channel);
        await redis.publish(channel, `round ${round}`);
        await expect.poll(() => heard).toEqual([`round ${round}`]);
        // A reconnection would come right after the ready check failed; the message arrives later.
        await subscriber.ping();
        expect(trouble, `round ${round}`).toEqual([]);
      } finally {
        subscriber.disconnect();
      }
    }
  });
});
