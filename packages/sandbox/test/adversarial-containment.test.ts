import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { preparedRunCgroup } from "../src/bwrap-driver.ts";
import { runPreparedCommand } from "../src/index.ts";
import { caps, driver, useAdversarialSandbox, ws } from "./helpers/adversarial-setup.ts";
import {
  hostSleepersWithTag,
  newDriver,
  runShell,
  testRuntimeRoot,
  waitFor,
} from "./helpers/sandbox-fixture.ts";

/**
 * Attacks an untrusted agent could try from inside a bwrap sandbox, run for real: resource limits, process lifetime, terminal injection and clean-up. Every case
 * asserts that the attack failed inside AND (afterEach) that nothing outside the checkout changed:
 * the other project, unrelated host files, the read-only git dir and a canary in /root are
 * fingerprinted (content, mode, mtime) before and compared after each test.
 */

const execFileAsync = promisify(execFile);

useAdversarialSandbox();

describe("resource limits", () => {
  it("contains a fork bomb with the pids limit (bounded attempt: 5000 forks)", async (context) => {
    if (!caps.pids.enforced) context.skip(`pids limit not enforceable here: ${caps.pids.detail}`);
    let peak: number | null = null;
    const prepared = await driver.prepare(
      [
        "/usr/bin/python3",
        "-c",
        `import os, time
n = 0
for i in range(5000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
print("forked", n, "visible", len([p for p in os.listdir("/proc") if p.isdigit()]), flush=True)`,
      ],
      ws.spec({ limits: { pidsMax: 64, memoryBytes: 512 * 1024 ** 2 } }),
    );
    try {
      const result = await runPreparedCommand(prepared, { timeoutMs: 30_000 });
      peak = (await preparedRunCgroup(prepared)?.readCounter("pids.peak")) ?? null;
      const match = /forked (\d+) visible (\d+)/.exec(result.stdout);
      expect(match, result.stderr).not.toBeNull();
      const forked = Number(match?.[1]);
      expect(forked).toBeLessThan(64);
      expect(forked).toBeGreaterThan(30);
      expect(Number(match?.[2])).toBeLessThanOrEqual(64);
      if (peak !== null) expect(peak).toBeLessThanOrEqual(64);
      // What the worker puts first in the run's failure.
      expect(await prepared.limitsReached()).toEqual([
        expect.stringMatching(/^pids_max 64 reached: \d+ forks refused$/),
      ]);
    } finally {
      await prepared.cleanup();
    }
  });

  it("contains a memory hog with the memory limit", async () => {
    const prepared = await driver.prepare(
      ["/usr/bin/python3", "-c", "data = b'x' * (768 << 20)\nprint('SURVIVED', len(data))"],
      ws.spec({ limits: { pidsMax: 64, memoryBytes: 128 * 1024 ** 2 } }),
    );
    try {
      const result = await runPreparedCommand(prepared, { timeoutMs: 30_000 });
      expect(result.stdout).not.toContain("SURVIVED");
      // cgroup: the OOM killer SIGKILLs it (bwrap reports 128+9); RLIMIT_AS fallback: MemoryError.
      expect(result.exitCode === 137 || /MemoryError/.test(result.stderr)).toBe(true);
      if (caps.memory.via.startsWith("cgroup"))
        expect(await prepared.limitsReached()).toEqual([
          expect.stringMatching(/^memory_mb 128 reached: \d+ process(es)? killed out of memory$/),
        ]);
    } finally {
      await prepared.cleanup();
    }
  });

  it("kills a process that exceeds its CPU-time budget", async () => {
    const result = await runShell(driver, "while :; do :; done", ws.spec({ limits: { cpuSeconds: 1 } }), {
      timeoutMs: 20_000,
    });
    expect(result.timedOut).toBe(false);
    // RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL at the hard one (both 1 s here); bwrap reports 128+signal.
    expect([128 + 24, 128 + 9]).toContain(result.exitCode);
  });
});

describe("process lifetime", () => {
  it("setsid, double-forked and nohup children all die when the process group is killed", async () => {
    const tag = `4000.${Date.now() % 1_000_000}`;
    const prepared = await driver.prepare(
      [
        "/bin/sh",
        "-c",
        `setsid sleep ${tag}1 & (sleep ${tag}2 &) ; nohup sleep ${tag}3 >/dev/null 2>&1 &
         setsid sh -c 'trap "" TERM HUP; exec sleep ${tag}4' & echo started; exec sleep ${tag}5`,
      ],
      ws.spec(),
    );
    try {
      const child = spawn(prepared.file, [...prepared.args], {
        cwd: prepared.cwd,
        env: { ...prepared.env },
        detached: true,
        stdio: "ignore",
      });
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      expect(await waitFor(async () => (await hostSleepersWithTag(tag)).length === 5, 10_000)).toBe(true);
      process.kill(-(child.pid as number), "SIGKILL");
      await exited;
      expect(await waitFor(async () => (await hostSleepersWithTag(tag)).length === 0, 5_000)).toBe(true);
    } finally {
      await prepared.cleanup();
    }
  });

  it("stop() gives the agent a graceful SIGTERM, then nothing survives", async () => {
    const tag = `4001.${Date.now() % 1_000_000}`;
    const prepared = await driver.prepare(
      [
        "/bin/sh",
        "-c",
        `trap 'echo graceful > terminated.txt; exit 0' TERM; setsid sleep ${tag} & echo ready; while :; do sleep 0.05; done`,
      ],
      ws.spec(),
    );
    try {
      let pid = 0;
      const run = runPreparedCommand(prepared, { timeoutMs: 30_000, onSpawn: (p) => (pid = p) });
      expect(await waitFor(async () => (await hostSleepersWithTag(tag)).length === 1, 10_000)).toBe(true);
      await prepared.stop(pid, { graceMs: 3_000 });
      const result = await run;
      expect(result.exitCode).toBe(0);
      expect(await readFile(join(ws.checkout, "terminated.txt"), "utf8")).toBe("graceful\n");
      expect(await waitFor(async () => (await hostSleepersWithTag(tag)).length === 0, 5_000)).toBe(true);
    } finally {
      await prepared.cleanup();
    }
  });

  it("leaves nothing in /tmp, HOME or /dev/shm for the next sandbox", async () => {
    const tag = `leftover-${ws.secret}`;
    await runShell(
      driver,
      `echo ${tag} > /tmp/${tag}; echo ${tag} > $HOME/${tag}; echo ${tag} > /dev/shm/${tag}; mkdir -p /var/tmp/x`,
      ws.spec(),
    );
    const second = await runShell(
      driver,
      "ls -A /tmp $HOME /dev/shm /var/tmp/ 2>&1; cat /tmp/* $HOME/* 2>&1; echo end",
      ws.spec(),
    );
    expect(second.stdout).not.toContain(tag);
    expect(existsSync(join("/tmp", tag))).toBe(false);
    expect(existsSync(join("/dev/shm", tag))).toBe(false);
  });

  it("does not see another running sandbox's processes", async () => {
    const tag = `4002.${Date.now() % 1_000_000}`;
    const first = await driver.prepare(["/bin/sleep", tag], ws.spec());
    try {
      let pid = 0;
      const run = runPreparedCommand(first, { timeoutMs: 30_000, onSpawn: (p) => (pid = p) });
      expect(await waitFor(async () => (await hostSleepersWithTag(tag)).length === 1, 10_000)).toBe(true);
      const second = await runShell(
        driver,
        "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '; echo end",
        ws.spec(),
      );
      expect(second.stdout).toContain("end");
      expect(second.stdout).not.toContain(tag);
      await first.stop(pid, { graceMs: 1_000 });
      await run;
    } finally {
      await first.cleanup();
    }
  });
});

describe("terminal injection", () => {
  const ptyHelper = join(import.meta.dirname, "fixtures", "pty-run.py");
  const inject = `import fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"Z")
    print("INJECTED")
except OSError as e:
    print("errno", e.errno)`;

  async function underPty(seccomp: boolean): Promise<{ seen: string; exit: number }> {
    const local = newDriver({ seccomp });
    const prepared = await local.prepare(["/usr/bin/python3", "-c", inject], ws.spec());
    try {
      const { stdout } = await execFileAsync(
        "/usr/bin/python3",
        [ptyHelper, prepared.file, ...prepared.args],
        {
          env: {},
          timeout: 30_000,
        },
      );
      return JSON.parse(stdout.trim().split("\n").pop() as string);
    } finally {
      await prepared.cleanup();
    }
  }

  it("TIOCSTI cannot push keystrokes into the worker's terminal (new session + seccomp)", async () => {
    const result = await underPty(true);
    expect(result.seen).toContain("errno 1");
    expect(result.seen).not.toContain("INJECTED");
    expect(result.seen).not.toContain("Z");
  });

  it("TIOCSTI fails even without the seccomp filter: --new-session alone detaches the terminal", async () => {
    const result = await underPty(false);
    expect(result.seen).toContain("errno 1");
    expect(result.seen).not.toContain("INJECTED");
  });
});

describe("cleanup", () => {
  it("removes the run cgroup and runtime files after the run", async () => {
    const prepared = await driver.prepare(["/bin/true"], ws.spec());
    const cgroup = preparedRunCgroup(prepared);
    await runPreparedCommand(prepared, { timeoutMs: 20_000 });
    await prepared.cleanup();
    for (const dir of cgroup?.dirs ?? []) expect(existsSync(dir)).toBe(false);
    const leftovers = (await readdir(testRuntimeRoot)).filter((e) => e.startsWith("run-"));
    expect(leftovers).toEqual([]);
    const local = newDriver();
    await local.prepare(["/bin/true"], ws.spec()).then((p) => p.cleanup());
    const before = await readdir(testRuntimeRoot);
    await local.dispose();
    const removed = before.filter((e) => !existsSync(join(testRuntimeRoot, e)));
    expect(removed.some((e) => e.startsWith("etc-"))).toBe(true);
    expect(removed.some((e) => e.startsWith("seccomp-"))).toBe(true);
  });
});
