/**
 * The phases `runHarness` composes, one `describe` each, every one against a real process:
 * spawn, stdio, ending the group, watching the control dir, deadlines.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createRedactor } from "@overseer/input-errors";
import { isProcessGroupAlive, processSpawnerPid, useRunNice } from "@overseer/process";
import { afterEach, describe, expect, it } from "vitest";
import { ControlWatcher } from "../src/control-watcher.ts";
import { HarnessNotConfiguredError } from "../src/harness-errors.ts";
import { type SpawnedHarness, spawnHarness } from "../src/harness-spawner.ts";
import { connectStdio } from "../src/harness-stdio.ts";
import { armDeadlines } from "../src/run-deadlines.ts";
import { type HarnessEndReason, RunEnder } from "../src/run-ender.ts";
import {
  cleanupAll,
  makeRunDirs,
  type RunDirs,
  runEnv,
  silentLogger,
  trackPid,
} from "./support/harness-fixtures.ts";

afterEach(cleanupAll);

const PATH = "/usr/bin:/bin";

async function spawnSh(script: string, dirs: RunDirs, env: Record<string, string> = { PATH }) {
  const spawned = await spawnHarness({ file: "sh", args: ["-c", script], env }, dirs.checkout, silentLogger);
  trackPid(spawned.pid);
  return spawned;
}

function enderFor(
  spawned: SpawnedHarness,
  fields: { killGraceMs?: number; transitionLingerMs?: number } = {},
) {
  return new RunEnder({
    pid: spawned.pid,
    exited: spawned.exited,
    killGraceMs: fields.killGraceMs ?? 300,
    transitionLingerMs: fields.transitionLingerMs ?? 0,
    logger: silentLogger,
  });
}

describe("spawnHarness", () => {
  it("starts the command in its own process group with exactly the given environment", async () => {
    const dirs = makeRunDirs();
    const spawned = await spawnSh(
      'echo "$OVERSEER_ONLY:$HOME" > env.txt; ps -o pgid= -p $$ > pgid.txt; exit 3',
      dirs,
      {
        PATH,
        OVERSEER_ONLY: "given",
      },
    );
    expect(await spawned.exited).toEqual({ code: 3, signal: null });
    await spawned.settled;
    expect(readFileSync(join(dirs.checkout, "env.txt"), "utf8")).toBe("given:\n");
    expect(Number(readFileSync(join(dirs.checkout, "pgid.txt"), "utf8").trim())).toBe(spawned.pid);
    expect(spawned.spawnedAt).toBeGreaterThan(0);
  });

  it("starts the agent at the run niceness (OVERSEER_RUN_NICE), below the worker", async () => {
    const dirs = makeRunDirs();
    useRunNice(9);
    try {
      // Reads its niceness once fed, after spawnHarness returned (and lowered it).
      const spawned = await spawnSh("read go; cut -d' ' -f19 /proc/$$/stat > nice.txt", dirs);
      spawned.stdin.end("go\n");
      expect(await spawned.exited).toEqual({ code: 0, signal: null });
      expect(readFileSync(join(dirs.checkout, "nice.txt"), "utf8")).toBe("9\n");
    } finally {
      useRunNice(0);
    }
  });

  it("ends the run's wait when the process spawner dies under it, and takes its group along", async () => {
    const dirs = makeRunDirs();
    const spawned = await spawnSh("sleep 300", dirs);
    const spawner = processSpawnerPid();
    expect(spawner).toBeDefined();
    process.kill(spawner as number, "SIGKILL");
    expect(await spawned.exited).toEqual({ code: null, signal: null });
    await spawned.settled;
    await expect.poll(() => isProcessGroupAlive(spawned.pid)).toBe(false);
  });

  it("reports a command that does not exist as HarnessNotConfiguredError (not_found)", async () => {
    const dirs = makeRunDirs();
    const error = await spawnHarness(
      { file: "/nonexistent/agent", args: [], env: { PATH } },
      dirs.checkout,
      silentLogger,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HarnessNotConfiguredError);
    expect((error as HarnessNotConfiguredError).message).toContain("/nonexistent/agent");
  });
});

describe("connectStdio", () => {
  it("feeds the prompt on stdin and collects stdout and stderr redacted", async () => {
    const dirs = makeRunDirs();
    const spawned = await spawnSh("cat; echo 'err canary-9' >&2", dirs);
    const seen: string[] = [];
    const stdio = connectStdio(spawned, {
      prompt: "the prompt with canary-9\n",
      maxOutputBytes: 1024,
      redact: createRedactor(["canary-9"]),
      onOutput: (chunk) => seen.push(chunk),
      flushMs: 10,
      logger: silentLogger,
    });
    const before = stdio.lastOutputAt();
    await spawned.exited;
    expect(await stdio.drain(2000)).toBe(true);
    stdio.collector.flush();
    // stdout and stderr are two pipes: which one the collector reads first is the scheduler's choice.
    expect(stdio.collector.text().split("\n").sort()).toEqual([
      "",
      "err [REDACTED]",
      "the prompt with [REDACTED]",
    ]);
    expect(seen.join("")).toBe(stdio.collector.text());
    expect(stdio.lastOutputAt()).toBeGreaterThan(before);
  });

  it("keeps the output when the live callback throws", async () => {
    const dirs = makeRunDirs();
    const spawned = await spawnSh("echo one; echo two", dirs);
    const stdio = connectStdio(spawned, {
      prompt: "",
      maxOutputBytes: 1024,
      redact: (t) => t,
      onOutput: () => {
        throw new Error("viewer gone");
      },
      flushMs: 10,
      logger: silentLogger,
    });
    await spawned.exited;
    await stdio.drain(2000);
    stdio.collector.flush();
    expect(stdio.collector.text()).toBe("one\ntwo\n");
  });
});

describe("RunEnder", () => {
  it("ends the whole group for the first reason only; a process ignoring SIGTERM is killed", async () => {
    const dirs = makeRunDirs();
    // `ready` once the shell ignores SIGTERM (and its sleep with it): a SIGTERM sent before the
    // trap is set would end the shell at once, and the case would not be about a process ignoring it.
    const spawned = await spawnSh("trap '' TERM; sleep 300 & : > ready; wait", dirs);
    await expect.poll(() => existsSync(join(dirs.checkout, "ready")), { timeout: 20_000 }).toBe(true);
    const ender = enderFor(spawned);
    expect(ender.reason).toBeNull();
    ender.end("timeout");
    ender.end("stall");
    expect(ender.reason).toBe("timeout");
    expect(await ender.ended()).toBe("killed");
    expect(isProcessGroupAlive(spawned.pid)).toBe(false);
    expect((await spawned.exited).signal).toBe("SIGKILL");
  });

  it("after a transition gives the harness its linger time to exit by itself", async () => {
    const dirs = makeRunDirs();
    const spawned = await spawnSh("sleep 0.1; exit 0", dirs);
    const ender = enderFor(spawned, { transitionLingerMs: 20_000, killGraceMs: 20_000 });
    ender.end("transition");
    expect(await ender.ended()).toBe("gone");
    expect(await spawned.exited).toEqual({ code: 0, signal: null });
  });

  it("after a natural exit kills what the harness left behind in its group", async () => {
    const dirs = makeRunDirs();
    const spawned = await spawnSh("sleep 300 & exit 0", dirs);
    await spawned.exited;
    expect(isProcessGroupAlive(spawned.pid)).toBe(true);
    const ender = enderFor(spawned);
    ender.end("exited");
    // A harness that exited needs no grace: its leftovers get SIGTERM and SIGKILL at once.
    expect(["terminated", "killed"]).toContain(await ender.ended());
    expect(isProcessGroupAlive(spawned.pid)).toBe(false);
  });
});

describe("ControlWatcher", () => {
  /** A started watcher of the run's control dir (backup poll out of the way) and what it reported. */
  function startedWatcher(dirs: RunDirs): { watcher: ControlWatcher; seen: string[] } {
    const seen: string[] = [];
    const watcher = new ControlWatcher({
      controlDir: dirs.control,
      maxBytes: 65536,
      pollMs: 60_000,
      onTransition: (t) => seen.push(t.kind),
    });
    watcher.start();
    return { watcher, seen };
  }

  it("sees the transition an agent records with overseer-agent, once", async () => {
    const dirs = makeRunDirs();
    const { watcher, seen } = startedWatcher(dirs);
    const spawned = await spawnSh(
      'overseer-agent submit --message "Add a.txt"; sleep 300',
      dirs,
      runEnv(dirs),
    );
    await expect.poll(() => seen, { timeout: 20_000 }).toEqual(["submit"]);
    expect(watcher.transition?.kind).toBe("submit");
    expect(watcher.transitionAt).not.toBeNull();
    await watcher.check();
    expect(seen).toEqual(["submit"]);
    expect(await watcher.close()).toBeNull();
    const ender = enderFor(spawned);
    ender.end("transition");
    await ender.ended();
  });

  it("reads the dir once at start and once for the published transition, not for overseer-agent's dotfiles", async () => {
    const dirs = makeRunDirs();
    const { watcher, seen } = startedWatcher(dirs);
    // Dotfiles only (the temp file and lock's kind of events): nothing to read.
    const dotted = await spawnSh(
      `for i in 1 2 3; do echo x >> '${join(dirs.control, ".scratch")}'; done; mv '${join(dirs.control, ".scratch")}' '${join(dirs.control, ".other")}'`,
      dirs,
    );
    await dotted.exited;
    const spawned = await spawnSh('overseer-agent submit --message "Add a.txt"', dirs, runEnv(dirs));
    await expect.poll(() => seen, { timeout: 20_000 }).toEqual(["submit"]);
    await spawned.exited;
    expect(await watcher.close()).toBeNull();
    // The first read at start, then one per event naming transition.json (its rename; at most
    // a second one should inotify split the rename's two halves across reads).
    expect(watcher.reads).toBeGreaterThanOrEqual(2);
    expect(watcher.reads).toBeLessThanOrEqual(3);
  });

  it("reports an invalid control file when it closes, without a transition", async () => {
    const dirs = makeRunDirs();
    const { watcher, seen } = startedWatcher(dirs);
    const spawned = await spawnSh(
      `printf '{"v":1,"kind":"nonsense"}' > '${join(dirs.control, "transition.json")}'`,
      dirs,
    );
    await spawned.exited;
    await watcher.check();
    const error = await watcher.close();
    expect(error).not.toBeNull();
    expect(seen).toEqual([]);
    expect(watcher.transition).toBeNull();
  });

  it("a transition written after the last check still counts at close", async () => {
    const dirs = makeRunDirs();
    const watcher = new ControlWatcher({
      controlDir: dirs.control,
      maxBytes: 65536,
      pollMs: 60_000,
      onTransition: () => undefined,
    });
    // Not started: only the final read can see it.
    const spawned = await spawnSh('overseer-agent approve --feedback "ok"', dirs, runEnv(dirs));
    await spawned.exited;
    expect(await watcher.close()).toBeNull();
    expect(watcher.transition?.kind).toBe("approve");
  });
});

describe("armDeadlines", () => {
  async function deadlineOf(
    script: string,
    fields: { timeoutMs: number; idleTimeoutMs: number; signal?: AbortSignal },
  ): Promise<HarnessEndReason> {
    const dirs = makeRunDirs();
    const spawned = await spawnSh(script, dirs);
    const stdio = connectStdio(spawned, {
      prompt: "",
      maxOutputBytes: 4096,
      redact: (t) => t,
      flushMs: 10,
      logger: silentLogger,
    });
    const ender = enderFor(spawned);
    const deadlines = armDeadlines({
      ...fields,
      watchPaths: [dirs.checkout],
      lastOutputAt: stdio.lastOutputAt,
      onDeadline: (reason) => ender.end(reason),
      onAbort: () => ender.end("aborted"),
    });
    await spawned.exited;
    deadlines.disarm();
    ender.end("exited");
    await ender.ended();
    await stdio.drain(2000);
    return ender.reason ?? "exited";
  }

  it("ends a silent process at the idle limit (stall)", async () => {
    expect(await deadlineOf("sleep 300", { timeoutMs: 60_000, idleTimeoutMs: 300 })).toBe("stall");
  });

  it("output keeps a process from stalling until the hard timeout", async () => {
    const script = "while true; do echo tick; sleep 0.05; done";
    expect(await deadlineOf(script, { timeoutMs: 3000, idleTimeoutMs: 1000 })).toBe("timeout");
  });

  it("file changes under the watched paths count as activity too", async () => {
    const script = "i=0; while true; do i=$((i+1)); echo $i > progress.txt; sleep 0.05; done";
    expect(await deadlineOf(script, { timeoutMs: 3000, idleTimeoutMs: 1000 })).toBe("timeout");
  });

  it("an abort ends the run; an already aborted signal at once", async () => {
    const controller = new AbortController();
    const pending = deadlineOf("sleep 300", {
      timeoutMs: 60_000,
      idleTimeoutMs: 0,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toBe("aborted");
    expect(
      await deadlineOf("sleep 300", { timeoutMs: 60_000, idleTimeoutMs: 0, signal: AbortSignal.abort() }),
    ).toBe("aborted");
  });

  it("a process that exits first is never ended by a deadline", async () => {
    expect(await deadlineOf("exit 0", { timeoutMs: 60_000, idleTimeoutMs: 60_000 })).toBe("exited");
  });
});
