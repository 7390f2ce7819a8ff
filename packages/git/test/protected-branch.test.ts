import { describe, expect, it } from "vitest";
import { protectedBranchRefusal } from "../src/index.ts";

// A real refusal (GitHub's pre-receive hook over smart HTTP) is read end to end in
// test/forge/protected-branch.e2e.ts: a local-path remote runs no hooks under the hardening config.

describe("protectedBranchRefusal", () => {
  it.each([
    [
      "GitHub",
      "remote: error: GH006: Protected branch update failed for refs/heads/main.\nremote: error: Changes must be made through a pull request.",
      "error: GH006: Protected branch update failed for refs/heads/main.",
    ],
    [
      "GitHub rulesets",
      "remote: error: GH013: Repository rule violations found for refs/heads/main.",
      "error: GH013: Repository rule violations found for refs/heads/main.",
    ],
    [
      "GitLab",
      "remote: GitLab: You are not allowed to push code to protected branches on this project.\nTo http://x/g/p.git",
      "GitLab: You are not allowed to push code to protected branches on this project.",
    ],
    [
      "GitLab force",
      "remote: GitLab: You are not allowed to force push code to a protected branch on this project.",
      "GitLab: You are not allowed to force push code to a protected branch on this project.",
    ],
    [
      "Gitea",
      "remote: Gitea: Not allowed to push to protected branch main\n",
      "Gitea: Not allowed to push to protected branch main",
    ],
    [
      "Forgejo",
      "remote: Forgejo: branch main is protected from force push",
      "Forgejo: branch main is protected from force push",
    ],
  ])("recognises %s's words", (_forge, stderr, line) => {
    expect(protectedBranchRefusal(stderr)).toBe(line);
  });

  it.each([
    "! [rejected] main -> main (fetch first)",
    "remote: error: hook declined to update refs/heads/main",
    "fatal: Authentication failed for 'https://x/a.git/'",
    "",
  ])("does not take another refusal for protection: %j", (stderr) => {
    expect(protectedBranchRefusal(stderr)).toBeNull();
  });
});
