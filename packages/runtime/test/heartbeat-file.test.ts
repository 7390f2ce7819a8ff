import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkHeartbeatFile, healthFilePath, startHeartbeatFile } from "../src/heartbeat-file.ts";

describe("heartbeat file", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "overseer-heartbeat-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("defaults to <data dir>/health/<service>.json; OVERSEER_HEALTH_FILE wins", () => {
    expect(healthFilePath("worker", { OVERSEER_DATA_DIR: "/data" })).toBe("/data/health/worker.json");
    expect(healthFilePath("worker", {})).toBe(path.resolve(".overseer-data/health/worker.json"));
    expect(
      healthFilePath("worker", { OVERSEER_DATA_DIR: "/data", OVERSEER_HEALTH_FILE: "/run/w1.json" }),
    ).toBe("/run/w1.json");
  });

  it("is fresh right after a beat, stale after three periods or the given max age, gone after stop", async () => {
    const file = path.join(dir, "health", "coordinator.json");
    const heartbeat = startHeartbeatFile({ file, service: "coordinator", intervalMs: 1000 });
    const record = JSON.parse(await readFile(file, "utf8"));
    expect(record).toMatchObject({ service: "coordinator", pid: process.pid, interval_ms: 1000 });

    expect(checkHeartbeatFile(file, { now: record.at + 3000 })).toMatchObject({ ok: true, ageMs: 3000 });
    const stale = checkHeartbeatFile(file, { now: record.at + 3001 });
    expect(stale.ok).toBe(false);
    expect(stale.ok ? "" : stale.reason).toContain("last beat 3001 ms ago (limit 3000 ms)");
    expect(checkHeartbeatFile(file, { now: record.at + 3001, maxAgeMs: 10_000 }).ok).toBe(true);

    heartbeat.stop();
    const missing = checkHeartbeatFile(file);
    expect(missing.ok ? "" : missing.reason).toBe(`no heartbeat file at ${file}`);
  });

  it("keeps beating on its timer, and leaves no file behind when stopped during a beat", async () => {
    const file = path.join(dir, "gateway.json");
    const heartbeat = startHeartbeatFile({ file, service: "gateway", intervalMs: 5 });
    const first = JSON.parse(await readFile(file, "utf8")).at as number;
    await expect
      .poll(async () => JSON.parse(await readFile(file, "utf8").catch(() => "{}")).at ?? first, {
        timeout: 10_000,
      })
      .toBeGreaterThan(first);
    heartbeat.stop();
    // A timer's write in flight at stop removes what it wrote once it ends.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await readdir(dir)).filter((f) => f.startsWith("gateway.json"))).toEqual([]);
  });

  it("refuses a file that is not a heartbeat record", async () => {
    const file = path.join(dir, "other.json");
    await writeFile(file, '{"hello":1}');
    const verdict = checkHeartbeatFile(file);
    expect(verdict.ok ? "" : verdict.reason).toContain("is not a heartbeat record");
  });
});
