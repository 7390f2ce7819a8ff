import { describe, expect, it } from "vitest";
import { GitInputError, REPO_MIRROR_DEFAULTS, resolveRepoMirrorOptions } from "../src/index.ts";

describe("resolveRepoMirrorOptions", () => {
  it("fills every option left out from REPO_MIRROR_DEFAULTS", () => {
    const resolved = resolveRepoMirrorOptions({});
    expect(resolved).toEqual(REPO_MIRROR_DEFAULTS);
    expect(resolved.refLockRetries).toBe(4);
    expect(resolved.networkTimeoutMs).toBe(600_000);
    expect(resolved.gitLockStaleMs).toBe(120_000);
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(Object.isFrozen(REPO_MIRROR_DEFAULTS)).toBe(true);
  });

  it("keeps what the caller set, including a retry count of 0", () => {
    const resolved = resolveRepoMirrorOptions({
      refLockRetries: 0,
      networkTimeoutMs: 5_000,
      hostGitConfig: true,
      autoMaintenance: false,
    });
    expect(resolved).toMatchObject({
      refLockRetries: 0,
      networkTimeoutMs: 5_000,
      hostGitConfig: true,
      autoMaintenance: false,
      gitTimeoutMs: REPO_MIRROR_DEFAULTS.gitTimeoutMs,
    });
  });

  it.each([
    [
      { refLockRetries: -1 },
      "refLockRetries",
      "refLockRetries: must be an integer of 0 or more, received -1",
    ],
    [
      { refLockRetries: 1.5 },
      "refLockRetries",
      "refLockRetries: must be an integer of 0 or more, received 1.5",
    ],
    [{ gitLockStaleMs: 0 }, "gitLockStaleMs", "gitLockStaleMs: must be a number greater than 0, received 0"],
    [{ lockTimeoutMs: -5 }, "lockTimeoutMs", "lockTimeoutMs: must be a number greater than 0, received -5"],
  ])("refuses %o naming the option, the rule and the value", (options, field, message) => {
    let thrown: unknown;
    try {
      resolveRepoMirrorOptions(options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GitInputError);
    expect((thrown as GitInputError).field).toBe(field);
    expect((thrown as GitInputError).message).toBe(message);
  });
});
