import path from "node:path";
import { describe, expect, it } from "vitest";
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
