import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const FIXTURE = path.join(import.meta.dirname, "fixtures", "signalled-service.ts");

/** A child running the fixture, with its stdout lines and a way to wait for one. */
function startService(dir: string, mode: "plain" | "drain" | "stuck") {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE, mode], {
    env: { ...process.env, OVERSEER_HEALTH_FILE: path.join(dir, "worker.json") },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: () => void }[] = [];
  let buffered = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    for (const line of parts) {
      lines.push(line);
      for (const w of waiters.filter((w) => line.startsWith(w.prefix))) w.resolve();
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const lineStarting = (prefix: string) =>
    lines.some((l) => l.startsWith(prefix))
      ? Promise.resolve()
      : new Promise<void>((resolve) => waiters.push({ prefix, resolve }));
  return { child, lines, exited, lineStarting };
}

describe("runUntilSignalled", () => {
  let dir: string;
  let child: ChildProcess | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "overseer-lifecycle-"));
  });
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts the fixture, sends SIGTERM once it is ready (in `drain` mode SIGINT once it stops), and waits for its exit. */
  async function shutDown(mode: "plain" | "drain" | "stuck") {
    const service = startService(dir, mode);
    child = service.child;
    await service.lineStarting("ready");
    service.child.kill("SIGTERM");
    if (mode === "drain") {
      await service.lineStarting("stop");
      service.child.kill("SIGINT");
    }
    return { code: await service.exited, lines: service.lines };
  }

  it("keeps a heartbeat until SIGTERM, then stops, removes the heartbeat, releases and exits 0", async () => {
    expect(await shutDown("plain")).toEqual({
      code: 0,
      lines: [
        "ready heartbeat=true",
        'log shutting down {"signal":"SIGTERM"}',
        "stop heartbeat=true",
        "release heartbeat=false",
      ],
    });
  }, 60_000);

  it("exits 1 once its grace is over when stopping hangs, without its heartbeat", async () => {
    expect(await shutDown("stuck")).toEqual({
      code: 1,
      lines: [
        "ready heartbeat=true",
        'log shutting down {"signal":"SIGTERM"}',
        "stop heartbeat=true",
        'warn did not stop within its grace of 300 ms; exiting now {"graceMs":300}',
      ],
    });
  }, 60_000);

  it("hands a signal that arrives while stopping to onSignalWhileStopping", async () => {
    expect(await shutDown("drain")).toEqual({
      code: 0,
      lines: [
        "ready heartbeat=true",
        'log shutting down {"signal":"SIGTERM"}',
        "stop heartbeat=true",
        "second signal",
        "release heartbeat=false",
      ],
    });
  }, 60_000);
});
