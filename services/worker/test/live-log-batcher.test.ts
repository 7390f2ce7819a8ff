import { randomBytes } from "node:crypto";
import { createRedis, LiveChannel, type Redis, resolveLiveOptions } from "@overseer/queue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LiveLogBatcher } from "../src/live-log-batcher.ts";

/**
 * Issue 9, breach 3: the worker peaked at 414 MB draining a 1.5 GB flood, because output
 * waiting for Redis piled up without bound. The batcher keeps at most twice its bound in
 * memory, and the live stream (real Redis) stays within the storage bound.
 */
const prefix = `batchtest-${randomBytes(4).toString("hex")}`;
const MAX = 256 * 1024;
let redis: Redis;
let live: LiveChannel;

beforeAll(() => {
  redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  live = new LiveChannel(redis, resolveLiveOptions({ prefix, maxLogBytes: MAX, maxLogEntries: 64 }));
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe("live log batcher under a flood", () => {
  it("holds at most twice its bound while output arrives faster than Redis takes it", async () => {
    const batcher = new LiveLogBatcher(live, "flood", MAX, 5);
    const chunk = `${"y".repeat(64 * 1024 - 1)}\n`;
    let peak = 0;
    for (let i = 0; i < 800; i++) {
      // 50 MiB pushed without yielding: nothing can reach Redis meanwhile.
      batcher.push(chunk);
      peak = Math.max(peak, batcher.bufferedChars);
    }
    expect(peak).toBeLessThanOrEqual(2 * MAX + chunk.length);
    batcher.push("last line\n");
    await batcher.flush();
    expect(batcher.bufferedChars).toBe(0);
    const rows = await redis.xrange(live.logKey("flood"), "-", "+");
    const text = rows.map(([, f]) => f[1] ?? "").join("");
    expect(rows.length).toBeLessThanOrEqual(64);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX);
    expect(text).toMatch(/^\[… \d+ (bytes|characters) of live output skipped/);
    expect(text.endsWith("last line\n")).toBe(true);
  });
});
