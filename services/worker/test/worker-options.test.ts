import { WORKER_DEFAULTS } from "@overseer/settings";
import { describe, expect, it } from "vitest";
import { resolveWorkerOptions, type WorkerServiceOptions } from "../src/worker-options.ts";

const REQUIRED: WorkerServiceOptions = {
  dataDir: "/tmp/overseer-worker-options",
  sandboxName: "bwrap",
  unsafe: false,
  sandboxFor: async () => undefined,
};

describe("resolveWorkerOptions", () => {
  it("fills every option from WORKER_DEFAULTS", () => {
    const resolved = resolveWorkerOptions(REQUIRED);
    expect(resolved).toMatchObject(WORKER_DEFAULTS);
    expect(resolved.id).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*-\d+$/);
    expect(resolved.sandboxRefusal({} as never)).toBeNull();
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(Object.isFrozen(WORKER_DEFAULTS)).toBe(true);
  });

  it("keeps what was passed and takes undefined as unset", () => {
    const resolved = resolveWorkerOptions({
      ...REQUIRED,
      concurrency: 4,
      drainMs: undefined,
      usageReportMs: 0,
    });
    expect(resolved.concurrency).toBe(4);
    expect(resolved.drainMs).toBe(WORKER_DEFAULTS.drainMs);
    expect(resolved.usageReportMs).toBe(0);
  });

  it("renews a short lock three times per lock unless told otherwise", () => {
    expect(resolveWorkerOptions({ ...REQUIRED, lockDurationMs: 3000 }).lockRenewMs).toBe(1000);
    expect(resolveWorkerOptions({ ...REQUIRED, lockDurationMs: 60_000 }).lockRenewMs).toBe(
      WORKER_DEFAULTS.lockRenewMs,
    );
    expect(resolveWorkerOptions({ ...REQUIRED, lockDurationMs: 2000, lockRenewMs: 1000 }).lockRenewMs).toBe(
      1000,
    );
  });

  it.each([
    [{ concurrency: 0 }, "concurrency must be an integer of at least 1, received 0"],
    [{ maxOutputBytes: 100 }, "maxOutputBytes must be an integer of at least 1024, received 100"],
    [{ diskCheckMs: 0.5 }, "diskCheckMs must be an integer of at least 1, received 0.5"],
    [{ drainMs: -1 }, "drainMs must be an integer of at least 0, received -1"],
    [{ runNice: -5 }, "runNice must be an integer of at least 0, received -5"],
    [{ runNice: 20 }, "runNice must be at most 19, received 20"],
    [
      { lockDurationMs: 3000, lockRenewMs: 3000 },
      "lockRenewMs must be below lockDurationMs (3000), received 3000",
    ],
    [{ dataDir: "" }, 'dataDir must be a directory path, received ""'],
  ])("refuses %j, naming the key, the rule and the value", (options, message) => {
    expect(() => resolveWorkerOptions({ ...REQUIRED, ...options })).toThrow(new RangeError(message));
  });
});
