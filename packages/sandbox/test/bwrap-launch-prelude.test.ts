import { existsSync, readFileSync } from "node:fs";
import { rmdir } from "node:fs/promises";
import { join } from "node:path";
import { launchPreludeAvailable, PROCESS_DEFAULTS, useProcessSpawner } from "@overseer/process";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { preparedRunCgroup } from "../src/bwrap-driver.ts";
import {
  LAUNCHER_SETUP_FAILED_EXIT,
  type PreparedCommand,
  type RunPreparedResult,
  runPreparedCommand,
} from "../src/index.ts";
import {
  createWorkspace,
  disposeDrivers,
  newDriver,
  type SandboxWorkspace,
} from "./helpers/sandbox-fixture.ts";

/**
 * bwrap spawned by the Perl process spawner with the host launcher's steps as a launch prelude
 * (launcher-script.ts `hostLaunchPrelude`), for real: bwrap, the run cgroups, the seccomp
 * program. Each run goes through a copy of the prepared command whose launcher cannot be
 * executed, so a run that works went through the prelude; the rest of the sandbox suites run the
 * same way by default (and with the launcher under OVERSEER_TEST_SANDBOX_SPAWN=node or direct).
 */

const driver = newDriver();
let ws: SandboxWorkspace;

beforeAll(async () => {
  useProcessSpawner(true, "perl");
  expect(await launchPreludeAvailable()).toBe(true);
});

afterAll(async () => {
  useProcessSpawner(PROCESS_DEFAULTS.spawner, PROCESS_DEFAULTS.spawnerProgram);
  await disposeDrivers();
});

beforeEach(async () => {
  ws = await createWorkspace();
});

afterEach(async () => {
  await ws.dispose();
});

/** `prepared` whose launcher (`file`) does not exist: only its preludeLaunch can run. */
function withoutLauncher(prepared: PreparedCommand): PreparedCommand {
  return Object.assign(Object.create(prepared) as PreparedCommand, { file: "/nonexistent/launcher" });
}

async function runDirect(
  prepared: PreparedCommand,
  onSpawn?: (pid: number) => void,
): Promise<RunPreparedResult> {
  try {
    return await runPreparedCommand(withoutLauncher(prepared), {
      timeoutMs: 20_000,
      ...(onSpawn ? { onSpawn } : {}),
    });
  } finally {
    await prepared.cleanup();
  }
}

describe("BwrapDriver through the Perl spawner's launch prelude", () => {
  it("runs bwrap itself: the agent has stdio only, bwrap an empty environment, the seccomp program applies", async () => {
    const prepared = await driver.prepare(
      [
        "/bin/sh",
        "-c",
        "ls /proc/self/fd | tr '\\n' ' '; echo; wc -c < /proc/1/environ; tr '\\0' ' ' < /proc/1/cmdline; echo; grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status | tr -s '\\t' ' '; cp /usr/bin/id ./suid && chmod u+s ./suid 2>&1; stat -c %a ./suid",
      ],
      ws.spec({ env: { PATH: "/usr/bin:/bin", ALLOWED_VAR: "allowed" } }),
    );
    expect(prepared.preludeLaunch?.file).toMatch(/bwrap$/);
    const result = await runDirect(prepared);
    expect(result.stderr).not.toContain("overseer-sandbox");
    const [fds, environBytes, cmdline, noNewPrivs, seccomp, ...rest] = result.stdout.split("\n");
    expect(fds?.trim()).toBe("0 1 2 3"); // ls's own directory fd is 3
    expect(environBytes).toBe("0");
    expect(cmdline?.split(" ")[0]).toMatch(/bwrap$/);
    expect([seccomp, noNewPrivs]).toEqual(["Seccomp: 2", "NoNewPrivs: 1"]);
    expect(rest.join("\n")).toMatch(/Operation not permitted/);
    expect(rest.join("\n")).toContain("\n755\n");
  });

  it("bwrap is in every run cgroup before it starts, and the agent has the rlimits", async () => {
    const prepared = await driver.prepare(
      [
        "/bin/sh",
        "-c",
        "grep -E '^Max (cpu time|file size|core file size)' /proc/self/limits | tr -s ' '; sleep 0.3",
      ],
      ws.spec({ limits: { cpuSeconds: 321, fileSizeBytes: 5 * 1024 * 1024 + 100 } }),
    );
    const cgroup = preparedRunCgroup(prepared);
    let joined: boolean[] = [];
    const result = await runDirect(prepared, (pid) => {
      // The child wrote itself in before it exec'd bwrap; its pid reaches us only after the exec.
      joined = (cgroup?.procsFiles ?? []).map((file) =>
        readFileSync(file, "utf8").split("\n").includes(String(pid)),
      );
    });
    expect(result.exitCode).toBe(0);
    if (cgroup !== null) expect(joined.length > 0 && joined.every(Boolean)).toBe(true);
    expect(result.stdout).toContain("Max cpu time 321 321 seconds");
    expect(result.stdout).toContain(`Max file size ${5 * 1024 * 1024} ${5 * 1024 * 1024} bytes`);
    expect(result.stdout).toContain("Max core file size 0 0 bytes");
  });

  it("without a memory cgroup, sets RLIMIT_AS as the launcher does", async () => {
    const fallback = newDriver({ cgroups: { mode: "off" } });
    const prepared = await fallback.prepare(
      ["/bin/sh", "-c", "grep -E '^Max address space' /proc/self/limits | tr -s ' '"],
      ws.spec({ limits: { memoryBytes: 1024 ** 3 } }),
    );
    expect((await runDirect(prepared)).stdout).toContain(`Max address space ${1024 ** 3} ${1024 ** 3} bytes`);
  });

  it("fails closed with the launcher's exit code and line when it cannot join its cgroup: bwrap never runs", async (context) => {
    const prepared = await driver.prepare(["/bin/sh", "-c", "echo RAN > ran.txt"], ws.spec());
    const cgroup = preparedRunCgroup(prepared);
    if (cgroup === null) {
      await prepared.cleanup();
      context.skip("no cgroups on this host");
    }
    const procs = cgroup?.procsFiles[0] as string;
    for (const dir of cgroup?.dirs ?? []) await rmdir(dir);
    const result = await runDirect(prepared);
    expect(result.exitCode).toBe(LAUNCHER_SETUP_FAILED_EXIT);
    expect(result.stderr).toBe(`overseer-sandbox: cannot join cgroup ${procs}\n`);
    expect(existsSync(join(ws.checkout, "ran.txt"))).toBe(false);
  });
});
