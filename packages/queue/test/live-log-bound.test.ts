import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { boundedPieces, createRedis, LiveChannel, type Redis, resolveLiveOptions } from "../src/index.ts";

/**
 * Issue 9, breach 3: a 1.5 GB flood left 1.08 GB in one run's live log stream. The stream
 * now has the same bound as stored output, in bytes and in entries, against real Redis.
 */
const prefix = `livetest-${randomBytes(4).toString("hex")}`;
const MAX_BYTES = 64 * 1024;
const MAX_ENTRIES = 32;
let redis: Redis;
let live: LiveChannel;

beforeAll(() => {
  redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  live = new LiveChannel(
    redis,
    resolveLiveOptions({ prefix, maxLogBytes: MAX_BYTES, maxLogEntries: MAX_ENTRIES }),
  );
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

async function streamBytes(runId: string): Promise<{ entries: number; bytes: number; text: string }> {
  const rows = await redis.xrange(live.logKey(runId), "-", "+");
  const text = rows.map(([, fields]) => fields[1] ?? "").join("");
  return { entries: rows.length, bytes: Buffer.byteLength(text), text };
}

describe("live log stream bound", () => {
  it("keeps at most maxLogEntries entries and maxLogBytes bytes, the newest output last", async () => {
    const line = (i: number) => `line ${i} ${"é".repeat(40)} ${"x".repeat(100)}\n`;
    let total = 0;
    for (let batch = 0; batch < 200; batch++) {
      const chunk = Array.from({ length: 50 }, (_, i) => line(batch * 50 + i)).join("");
      total += Buffer.byteLength(chunk);
      await live.appendLog("flood", chunk);
    }
    expect(total).toBeGreaterThan(20 * MAX_BYTES);
    const { entries, bytes, text } = await streamBytes("flood");
    expect(entries).toBeLessThanOrEqual(MAX_ENTRIES);
    expect(bytes).toBeLessThanOrEqual(MAX_BYTES);
    expect(bytes).toBeGreaterThan(MAX_BYTES / 2);
    expect(text.endsWith(line(9999))).toBe(true);
    expect(text).not.toContain("\uFFFD"); // no character was cut in two
  });

  it("a single chunk larger than the bound keeps its end after a marker", async () => {
    const huge = `${"a".repeat(5 * MAX_BYTES)}THE END\n`;
    await live.appendLog("huge", huge);
    const { entries, bytes, text } = await streamBytes("huge");
    expect(entries).toBeLessThanOrEqual(MAX_ENTRIES);
    expect(bytes).toBeLessThanOrEqual(MAX_BYTES);
    expect(text).toMatch(/^\[… \d+ bytes of live output skipped\]\n/);
    expect(text.endsWith("THE END\n")).toBe(true);
  });

  it("splits text into pieces of bounded bytes without cutting characters", () => {
    const pieces = boundedPieces("ab😀cd😀".repeat(10), 7, 100);
    for (const p of pieces) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(7);
    expect(pieces.join("")).toBe("ab😀cd😀".repeat(10));
  });
});
