import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SharedRefresh } from "../src/live/shared-refresh.ts";

/** A load whose reads the test finishes by hand: `reads` began, `finish(i, value)` ends read i. */
function manualLoad() {
  const pending: { resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  return {
    load: () =>
      new Promise<string>((resolve, reject) => {
        pending.push({ resolve, reject });
      }),
    reads: () => pending.length,
    finish: (i: number, value: string) => pending[i]?.resolve(value),
    fail: (i: number, error: Error) => pending[i]?.reject(error),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("SharedRefresh", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"], now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("joins concurrent callers to one read and reuses its value for ttlMs", async () => {
    const m = manualLoad();
    const shared = new SharedRefresh(m.load, { ttlMs: 1000 });
    const both = Promise.all([shared.get(), shared.get()]);
    expect(m.reads()).toBe(1);
    m.finish(0, "a");
    expect(await both).toEqual(["a", "a"]);
    vi.setSystemTime(1_000_999);
    expect(await shared.get()).toBe("a");
    expect(m.reads()).toBe(1);
    // Past ttlMs without staleMs: the caller waits for the next read.
    vi.setSystemTime(1_001_000);
    const next = shared.get();
    expect(m.reads()).toBe(2);
    m.finish(1, "b");
    expect(await next).toBe("b");
  });

  it("answers the previous value at once while one refresh runs, up to ttlMs + staleMs", async () => {
    const m = manualLoad();
    const errors: unknown[] = [];
    const shared = new SharedRefresh(m.load, {
      ttlMs: 1000,
      staleMs: 2000,
      onBackgroundError: (e) => errors.push(e),
    });
    const first = shared.get();
    m.finish(0, "a");
    await first;
    vi.setSystemTime(1_001_500);
    // Stale: answered at once, one refresh behind it (not one per caller).
    expect(await shared.get()).toBe("a");
    expect(await shared.get()).toBe("a");
    expect(m.reads()).toBe(2);
    m.finish(1, "b");
    await tick();
    expect(await shared.get()).toBe("b");
    // A failed background refresh keeps the value until its bound, and is reported.
    vi.setSystemTime(1_001_500 + 1500);
    expect(await shared.get()).toBe("b");
    m.fail(2, new Error("postgres down"));
    await tick();
    expect(errors).toHaveLength(1);
    // Past ttlMs + staleMs the caller waits for a read.
    vi.setSystemTime(1_001_500 + 3000);
    const late = shared.get();
    expect(m.reads()).toBe(4);
    m.finish(3, "c");
    expect(await late).toBe("c");
  });

  it("after invalidate, never answers a value read before it, stale or in flight", async () => {
    const m = manualLoad();
    const shared = new SharedRefresh(m.load, { ttlMs: 1000, staleMs: 60_000 });
    const first = shared.get();
    m.finish(0, "old");
    await first;
    vi.setSystemTime(1_001_500);
    const inFlightBefore = shared.get();
    expect(m.reads()).toBe(2);
    shared.invalidate();
    // The fresh value is dropped and the read in flight is not joined: a new read.
    const after = shared.get();
    expect(m.reads()).toBe(3);
    m.finish(1, "read-before-the-change");
    expect(await inFlightBefore).toBe("old");
    m.finish(2, "new");
    expect(await after).toBe("new");
    // The read from before the change did not fill the value either.
    expect(await shared.get()).toBe("new");
    expect(m.reads()).toBe(3);
  });

  it("reads on every call with ttlMs 0", async () => {
    let reads = 0;
    const shared = new SharedRefresh(async () => ++reads, { ttlMs: 0, staleMs: 1000 });
    await shared.get();
    await shared.get();
    expect(reads).toBe(2);
  });
});
