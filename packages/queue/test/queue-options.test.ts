import { COORDINATOR_DEFAULTS, QUEUE_DEFAULTS } from "@overseer/settings";
import { describe, expect, it } from "vitest";
import { resolveLiveOptions, resolveQueueOptions } from "../src/index.ts";

describe("resolveQueueOptions", () => {
  it("fills every option from QUEUE_DEFAULTS and keeps what was passed", () => {
    expect(resolveQueueOptions()).toEqual({
      prefix: QUEUE_DEFAULTS.prefix,
      infraAttempts: QUEUE_DEFAULTS.infraAttempts,
      infraBackoffMs: QUEUE_DEFAULTS.infraBackoffMs,
      notifyAttempts: COORDINATOR_DEFAULTS.notifyAttempts,
      notifyBackoffMs: COORDINATOR_DEFAULTS.notifyBackoffMs,
    });
    expect(resolveQueueOptions({ prefix: "p", infraBackoffMs: 0 })).toMatchObject({
      prefix: "p",
      infraBackoffMs: 0,
    });
    expect(Object.isFrozen(resolveQueueOptions())).toBe(true);
  });

  it.each([
    [{ infraAttempts: 0 }, "infraAttempts must be an integer of at least 1, received 0"],
    [{ infraBackoffMs: -1 }, "infraBackoffMs must be an integer >= 0, received -1"],
    [{ notifyAttempts: 0 }, "notifyAttempts must be an integer of at least 1, received 0"],
    [{ notifyBackoffMs: -1 }, "notifyBackoffMs must be an integer >= 0, received -1"],
  ])("refuses %j, naming the key, the rule and the value", (options, message) => {
    expect(() => resolveQueueOptions(options)).toThrow(new RangeError(message));
  });
});

describe("resolveLiveOptions", () => {
  it("fills every option from QUEUE_DEFAULTS and keeps what was passed", () => {
    expect(resolveLiveOptions()).toEqual({
      prefix: QUEUE_DEFAULTS.prefix,
      maxLogBytes: QUEUE_DEFAULTS.maxLogBytes,
      maxLogEntries: QUEUE_DEFAULTS.maxLogEntries,
      logTtlSeconds: QUEUE_DEFAULTS.logTtlSeconds,
    });
    expect(resolveLiveOptions({ maxLogBytes: 1024, maxLogEntries: 64 })).toMatchObject({
      maxLogBytes: 1024,
      maxLogEntries: 64,
    });
  });

  it.each([
    [{ maxLogEntries: 0 }, "maxLogEntries must be a positive integer, received 0"],
    [
      { maxLogBytes: 1000, maxLogEntries: 100 },
      "maxLogBytes must be an integer of at least 16 bytes per entry (100 entries), received 1000",
    ],
    [{ logTtlSeconds: 0 }, "logTtlSeconds must be a positive integer, received 0"],
  ])("refuses %j, naming the key, the rule and the value", (options, message) => {
    expect(() => resolveLiveOptions(options)).toThrow(new RangeError(message));
  });
});
