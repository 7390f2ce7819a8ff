import { readFile } from "node:fs/promises";
import path from "node:path";
import { isProcessAlive, processSpawnerPid, useProcessSpawner } from "@overseer/process";
import { afterAll, describe, expect, it } from "vitest";
import { GitError, HARDENING_CONFIG, redactUrlCredentials, runGit } from "../src/index.ts";
import { makeRemote, useTempScope } from "./git-test-helpers.ts";

const temp = useTempScope();

describe("runGit", () => {
  it("throws a GitError with the args, exit code and stderr", async () => {
    const dir = await temp.make();
    const error = await runGit(["rev-parse", "--verify", "no-such-ref"], { cwd: dir }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GitError);
    const gitError = error as GitError;
    expect(gitError.name).toBe("GitError");
    expect(gitError.args).toEqual(["rev-parse", "--verify", "no-such-ref"]);
    expect(gitError.exitCode).toBe(128);
    expect(gitError.stderr).toMatch(/not a git repository/);
    expect(gitError.message).toContain("git rev-parse --verify no-such-ref exited with code 128");
  });

  it("accepts listed exit codes as answers", async () => {
    const dir = await temp.make();
    const remote = await makeRemote(dir, { "a.txt": "a\n" });
    const result = await runGit(["rev-parse", "--verify", "--quiet", "nope"], {
      cwd: remote,
      okExitCodes: [1],
    });
    expect(result.exitCode).toBe(1);
  });

  it("applies the hardening config and ignores inherited repository variables", async () => {
    const dir = await temp.make();
    const remote = await makeRemote(dir, { "a.txt": "a\n" });
    const saved = { ...process.env };
    process.env.GIT_DIR = path.join(dir, "elsewhere");
    process.env.GIT_CONFIG_PARAMETERS = "'core.hookspath'='/tmp/evil'";
    try {
      const hooks = await runGit(["config", "--get", "core.hooksPath"], { cwd: remote });
      expect(hooks.stdout.trim()).toBe("/dev/null");
      const origin = await runGit(["config", "--show-origin", "--get-all", "core.fsmonitor"], {
        cwd: remote,
      });
      expect(origin.stdout).toContain("command line:");
      const env = await runGit(["var", "GIT_EDITOR"], { cwd: remote });
      expect(env.stdout.trim()).toBe(":");
    } finally {
      process.env = saved;
    }
    expect(HARDENING_CONFIG).toContain("core.hooksPath=/dev/null");
  });

  it("kills git after timeoutMs and says so", async () => {
    const dir = await temp.make();
    const error = await runGit(["-c", "alias.hang=!sleep 30", "hang"], { cwd: dir, timeoutMs: 200 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).timedOut).toBe(true);
    expect((error as GitError).message).toContain("timed out");
  });

  it("feeds stdin, keeps the output byte for byte, and fails past maxOutputBytes", async () => {
    const dir = await temp.make();
    const remote = await makeRemote(dir, { "a.txt": "a\n" });
    const text = "ünïcode line\n".repeat(2000);
    const blob = (await runGit(["hash-object", "-w", "--stdin"], { cwd: remote, input: text })).stdout.trim();
    expect((await runGit(["cat-file", "blob", blob], { cwd: remote })).stdout).toBe(text);
    const error = await runGit(["cat-file", "blob", blob], { cwd: remote, maxOutputBytes: 1000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).exitCode).toBeNull();
    expect((error as GitError).stderr).toContain("over 1000 bytes");
  });

  it("redacts credentials embedded in URLs", () => {
    expect(redactUrlCredentials("fatal: https://bot:s3cret@example.com/x.git")).toBe(
      "fatal: https://***@example.com/x.git",
    );
  });
});

/** Waits (bounded) until `pid` is gone; true when it went. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && isProcessAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  return !isProcessAlive(pid);
}

/** Reads the pid an alias wrote to `file`, once it is there. */
async function pidIn(file: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const text = await readFile(file, "utf8").catch(() => "");
    if (text.endsWith("\n")) return Number(text);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no pid in ${file}`);
}

describe.each([
  ["through the process spawner", true],
  ["spawned directly", false],
])("runGit %s", (_name, viaSpawner) => {
  afterAll(() => useProcessSpawner(true));

  it("gives the same output, exit codes and stderr", async () => {
    useProcessSpawner(viaSpawner);
    const dir = await temp.make();
    const remote = await makeRemote(dir, { "a.txt": "a\n" });
    const log = await runGit(["log", "--format=%s%n%b", "-1"], { cwd: remote });
    expect(log).toEqual({ stdout: "Initial commit\n\n", stderr: "", exitCode: 0 });
    const error = (await runGit(["cat-file", "-p", "HEAD:missing"], { cwd: remote }).catch(
      (e) => e,
    )) as GitError;
    expect(error.exitCode).toBe(128);
    expect(error.stderr).toBe("fatal: path 'missing' does not exist in 'HEAD'\n");
    const big = await runGit(["-c", "alias.big=!head -c 12000000 /dev/zero | tr '\\0' a", "big"], {
      cwd: dir,
    });
    expect(big.stdout).toBe("a".repeat(12_000_000));
  });

  it("on timeout kills git's whole process group: the processes git started too", async () => {
    useProcessSpawner(viaSpawner);
    const dir = await temp.make();
    const pidFile = path.join(dir, "sleep.pid");
    const hang = `alias.hang=!sleep 60 & echo $! > '${pidFile}'; wait`;
    const running = runGit(["-c", hang, "hang"], { cwd: dir, timeoutMs: 1500 }).catch((e: unknown) => e);
    const sleeper = await pidIn(pidFile);
    const error = (await running) as GitError;
    expect(error.timedOut).toBe(true);
    expect(await gone(sleeper)).toBe(true);
  });
});

describe("runGit when the process spawner dies", () => {
  it("fails the git call in flight with a clear GitError and kills its group; the next call works", async () => {
    useProcessSpawner(true);
    const dir = await temp.make();
    const pidFile = path.join(dir, "sleep.pid");
    const hang = `alias.hang=!sleep 60 & echo $! > '${pidFile}'; wait`;
    const running = runGit(["-c", hang, "hang"], { cwd: dir }).catch((e: unknown) => e);
    const sleeper = await pidIn(pidFile);
    process.kill(processSpawnerPid() as number, "SIGKILL");
    const error = (await running) as GitError;
    expect(error).toBeInstanceOf(GitError);
    expect(error.exitCode).toBeNull();
    expect(error.stderr).toMatch(/process spawner \(pid \d+\) was killed by SIGKILL while this command ran/);
    expect(await gone(sleeper)).toBe(true);
    expect((await runGit(["--version"], { cwd: dir })).stdout).toMatch(/^git version/);
  });
});
