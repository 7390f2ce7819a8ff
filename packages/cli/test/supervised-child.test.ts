import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RestartPolicy, SupervisedChild } from "../src/up/supervised-child.ts";

/**
 * `overseer up`'s supervision of one service, with real Node child processes: restarts with
 * backoff after crashes, gives up on a configuration error (exit 2), stops in order (SIGTERM,
 * then SIGKILL to the whole process group).
 */

interface Seen {
  lines: string[];
  started: { pid: number; restart: number }[];
  crashed: { exit: number | string | null; delayMs: number | null }[];
}

let dir: string;
const children: SupervisedChild[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "overseer-supervised-"));
});
afterEach(async () => {
  for (const child of children.splice(0)) await child.stop(1000);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const FAST: RestartPolicy = { initialDelayMs: 20, maxDelayMs: 80, stableAfterMs: 60_000 };

/** A supervised `node -e script`, recording what it reports. */
function supervise(script: string, policy: RestartPolicy = FAST): { child: SupervisedChild; seen: Seen } {
  const seen: Seen = { lines: [], started: [], crashed: [] };
  const child = new SupervisedChild(
    { name: "svc", args: ["-e", script], env: process.env, cwd: dir },
    policy,
    {
      line: (_child, line) => seen.lines.push(line),
      started: (_child, pid, restart) => seen.started.push({ pid, restart }),
      crashed: (_child, exit, delayMs) => seen.crashed.push({ exit, delayMs }),
    },
  );
  children.push(child);
  child.start();
  return { child, seen };
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("SupervisedChild", () => {
  it("restarts a crashing service with a doubling delay up to the cap, and relays its output", async () => {
    const { child, seen } = supervise("console.log('up'); console.error('oops'); process.exit(1)");
    await expect.poll(() => seen.crashed.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
    await child.stop(1000);
    expect(seen.crashed.slice(0, 4)).toEqual([
      { exit: 1, delayMs: 20 },
      { exit: 1, delayMs: 40 },
      { exit: 1, delayMs: 80 },
      { exit: 1, delayMs: 80 },
    ]);
    expect(seen.started.slice(0, 4).map((s) => s.restart)).toEqual([0, 1, 2, 3]);
    expect(new Set(seen.started.map((s) => s.pid)).size).toBe(seen.started.length);
    expect(seen.lines).toContain("up");
    expect(seen.lines).toContain("oops");
    expect(child.failure).toBeNull();
  });

  it("restarts after the first delay again when the service had run stably before it crashed", async () => {
    const { child, seen } = supervise("setTimeout(() => process.exit(3), 150)", {
      ...FAST,
      stableAfterMs: 100,
    });
    await expect.poll(() => seen.crashed.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    await child.stop(1000);
    expect(seen.crashed.slice(0, 3)).toEqual([
      { exit: 3, delayMs: 20 },
      { exit: 3, delayMs: 20 },
      { exit: 3, delayMs: 20 },
    ]);
  });

  it("never restarts a service that exits with a configuration error (2), and says so", async () => {
    const { child, seen } = supervise("console.error('DATABASE_URL is not a URL'); process.exit(2)");
    await expect
      .poll(() => child.failure, { timeout: 10_000 })
      .toBe("svc exited with a configuration error (exit 2)");
    expect(seen.crashed).toEqual([{ exit: 2, delayMs: null }]);
    expect(seen.started).toHaveLength(1);
    expect(seen.lines).toEqual(["DATABASE_URL is not a URL"]);
    expect(child.pid).toBeNull();
  });

  it("stop sends SIGTERM and waits; a service that exits on it is not restarted", async () => {
    const { child, seen } = supervise(
      "process.on('SIGTERM', () => { console.log('draining'); process.exit(0); }); console.log('ready'); setInterval(() => {}, 1000)",
    );
    await expect.poll(() => seen.lines, { timeout: 10_000 }).toContain("ready");
    const pid = child.pid as number;
    await child.stop(10_000);
    expect(seen.lines).toContain("draining");
    expect(alive(pid)).toBe(false);
    expect(seen.crashed).toEqual([]);
    expect(child.pid).toBeNull();
  });

  it("stop kills the whole process group when the service ignores SIGTERM past the grace", async () => {
    // The service starts a grandchild in its group, then ignores SIGTERM.
    const { child, seen } = supervise(
      [
        "const { spawn } = require('node:child_process');",
        "const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });",
        "process.on('SIGTERM', () => console.log('ignoring SIGTERM'));",
        "console.log('grandchild ' + grandchild.pid);",
        "setInterval(() => {}, 1000);",
      ].join("\n"),
    );
    await expect
      .poll(() => seen.lines.find((l) => l.startsWith("grandchild ")), { timeout: 10_000 })
      .toBeTruthy();
    const grandchild = Number(seen.lines.find((l) => l.startsWith("grandchild "))?.split(" ")[1]);
    const pid = child.pid as number;
    await child.stop(300);
    expect(seen.lines).toContain("ignoring SIGTERM");
    expect(alive(pid)).toBe(false);
    await expect.poll(() => alive(grandchild), { timeout: 10_000 }).toBe(false);
    expect(seen.crashed).toEqual([]);
  });

  it("signal forwards a signal to the running service; killNow ends its group at once", async () => {
    const { child, seen } = supervise(
      "process.on('SIGUSR2', () => console.log('got SIGUSR2')); console.log('ready'); setInterval(() => {}, 1000)",
    );
    await expect.poll(() => seen.lines, { timeout: 10_000 }).toContain("ready");
    child.signal("SIGUSR2");
    await expect.poll(() => seen.lines, { timeout: 10_000 }).toContain("got SIGUSR2");
    const pid = child.pid as number;
    child.killNow();
    await expect.poll(() => alive(pid), { timeout: 10_000 }).toBe(false);
    expect(seen.crashed).toEqual([]);
    expect(seen.started).toHaveLength(1);
  });
});
