import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { acquireFileLock, LockTimeoutError, withFileLock } from "../src/index.ts";
import { runFixture, useTempScope, waitForLine } from "./git-test-helpers.ts";

const temp = useTempScope();

describe("file lock", () => {
  it("gives mutual exclusion to concurrent holders in one process", async () => {
    const lockPath = path.join(await temp.make(), "x.lock");
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        withFileLock(lockPath, {}, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await delay(2);
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(1);
    await expect(fs.access(lockPath)).rejects.toThrow();
  });

  it("breaks a lock whose holder was SIGKILLed, without waiting for the stale bound", async () => {
    const lockPath = path.join(await temp.make(), "x.lock");
    const child = runFixture("lock-holder.ts", [lockPath]);
    try {
      await waitForLine(child, "locked");
      child.kill("SIGKILL");
      await child;
      // staleMs is far longer than the wait allowed: only dead-pid detection can succeed.
      const lock = await acquireFileLock(lockPath, { staleMs: 600_000, timeoutMs: 10_000 });
      await lock.release();
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("breaks a lock not refreshed within staleMs (holder unknown or on another host)", async () => {
    const lockPath = path.join(await temp.make(), "x.lock");
    await fs.writeFile(
      lockPath,
      JSON.stringify({ pid: 1, host: `not-${os.hostname()}`, token: "t", since: "" }),
    );
    const old = new Date(Date.now() - 120_000);
    await fs.utimes(lockPath, old, old);
    const lock = await acquireFileLock(lockPath, { staleMs: 60_000, timeoutMs: 10_000 });
    const record = JSON.parse(await fs.readFile(lockPath, "utf8")) as { pid: number };
    expect(record.pid).toBe(process.pid);
    await lock.release();
  });

  it("waits for a live holder and times out with the holder named", async () => {
    const lockPath = path.join(await temp.make(), "x.lock");
    const held = await acquireFileLock(lockPath, { staleMs: 60_000 });
    try {
      const error = await acquireFileLock(lockPath, { staleMs: 60_000, timeoutMs: 50 }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LockTimeoutError);
      expect((error as Error).message).toContain(`pid ${process.pid}`);
    } finally {
      await held.release();
    }
  });
});
