import { ConfigError } from "@overseer/input-errors";
import { describe, expect, it } from "vitest";
import {
  landingSettingsOf,
  PULL_REQUEST_DEFAULTS,
  parseRunnerConfig,
  redactRunnerConfig,
  runnerConfigSecretValues,
} from "../src/index.ts";

const TOKEN = "ghp_forgeTokenValue0123456789abcdefABCD";
const FORGE = { kind: "github", url: "https://github.com/", repository: "acme/app", token: TOKEN };

function configError(input: unknown): ConfigError {
  try {
    parseRunnerConfig(input, "runner.yaml");
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected parseRunnerConfig to throw");
}

describe("landing.mode and landing.pull_request", () => {
  it("defaults to push mode with every pull request default, and no forge", () => {
    const config = parseRunnerConfig({}, "runner.yaml");
    expect(config.landing.mode).toBe("push");
    expect(config.landing.pull_request).toEqual({
      ...PULL_REQUEST_DEFAULTS,
      labels: ["overseer"],
      required_checks: [],
    });
    expect(config.forge).toBeUndefined();
    const settings = landingSettingsOf(config);
    expect(settings).toEqual({
      mode: "push",
      forge: null,
      pullRequest: {
        labels: ["overseer"],
        merge: "manual",
        mergeMethod: "squash",
        requiredApprovals: 1,
        requiredChecks: [],
        onClosed: "cancel",
        prerequisites: "merged",
        pollSeconds: 120,
        logTailBytes: 8192,
      },
    });
  });

  it("reads every pull request key and the forge in pull_request mode", () => {
    const config = parseRunnerConfig(
      {
        landing: {
          mode: "pull_request",
          strategy: "merge",
          pull_request: {
            labels: ["overseer", "bot"],
            merge: "auto",
            merge_method: "rebase",
            required_approvals: 0,
            required_checks: ["ci / test", "lint"],
            on_closed: "todo",
            prerequisites: "stacked",
            poll_seconds: 0,
            log_tail_bytes: 4096,
          },
        },
        forge: {
          kind: "gitlab",
          url: "https://gitlab.example/gitlab/",
          repository: "group/sub/app",
          token: TOKEN,
        },
      },
      "runner.yaml",
    );
    const settings = landingSettingsOf(config);
    expect(settings.mode).toBe("pull_request");
    expect(settings.forge).toEqual({
      kind: "gitlab",
      url: "https://gitlab.example/gitlab",
      repository: "group/sub/app",
      token: TOKEN,
      auth: { kind: "token", token: TOKEN },
    });
    expect(settings.pullRequest).toEqual({
      labels: ["overseer", "bot"],
      merge: "auto",
      mergeMethod: "rebase",
      requiredApprovals: 0,
      requiredChecks: ["ci / test", "lint"],
      onClosed: "todo",
      prerequisites: "stacked",
      pollSeconds: 0,
      logTailBytes: 4096,
    });
    expect(Object.isFrozen(settings.pullRequest)).toBe(true);
  });

  it("requires forge in pull_request mode, saying how to set it", () => {
    const error = configError({ landing: { mode: "pull_request" } });
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatchObject({ path: "forge", received: "nothing" });
    expect(error.message).toContain("required when landing.mode is pull_request");
    expect(error.message).toContain(
      "overseer init --project ID --update --forge github|gitlab|gitea --forge-url URL",
    );
  });

  it("accepts a forge in push mode (doctor can check it) and keeps push", () => {
    const config = parseRunnerConfig({ forge: FORGE }, "runner.yaml");
    expect(landingSettingsOf(config)).toMatchObject({
      mode: "push",
      forge: { kind: "github", url: "https://github.com" },
    });
  });

  const BAD: [unknown, string, string][] = [
    [{ landing: { mode: "pr" } }, "landing.mode", 'did you mean "pull_request"?'],
    [{ landing: { mode: "direct" } }, "landing.mode", 'one of "push", "pull_request"'],
    [
      { landing: { pull_request: { merge: "yes" } } },
      "landing.pull_request.merge",
      'one of "manual", "auto", "queue"',
    ],
    [
      { landing: { pull_request: { merge_method: "fast-forward" } } },
      "landing.pull_request.merge_method",
      'one of "merge", "squash", "rebase"',
    ],
    [
      { landing: { pull_request: { required_approvals: -1 } } },
      "landing.pull_request.required_approvals",
      "an integer from 0 to 100",
    ],
    [
      { landing: { pull_request: { required_checks: "ci" } } },
      "landing.pull_request.required_checks",
      "an array of check names",
    ],
    [{ landing: { pull_request: { labels: ["a,b"] } } }, "landing.pull_request.labels[0]", "no commas"],
    [
      { landing: { pull_request: { on_closed: "delete" } } },
      "landing.pull_request.on_closed",
      'one of "cancel", "todo"',
    ],
    [
      { landing: { pull_request: { prerequisites: "none" } } },
      "landing.pull_request.prerequisites",
      'one of "merged", "stacked"',
    ],
    [
      { landing: { pull_request: { poll_seconds: 1.5 } } },
      "landing.pull_request.poll_seconds",
      "0 = no polling",
    ],
    [
      { landing: { pull_request: { log_tail_bytes: 10 } } },
      "landing.pull_request.log_tail_bytes",
      "from 256",
    ],
    [{ forge: { ...FORGE, kind: "bitbucket" } }, "forge.kind", 'one of "github", "gitlab", "gitea"'],
    [{ forge: { ...FORGE, url: "github.com" } }, "forge.url", "http(s)://host"],
    [{ forge: { ...FORGE, url: "https://user:pw@github.com" } }, "forge.url", "without credentials"],
    [{ forge: { ...FORGE, repository: "app" } }, "forge.repository", "owner/name"],
    [{ forge: { ...FORGE, repository: "acme/app.git" } }, "forge.repository", "without .git"],
    [{ forge: { ...FORGE, repository: "a/b/c" } }, "forge.repository", "only GitLab has groups"],
    [{ forge: { ...FORGE, token: "" } }, "forge.token", "a non-empty access token"],
    [
      { forge: { kind: "github", url: "https://github.com", repository: "a/b" } },
      "forge.token",
      "access token",
    ],
    [{ forge: { ...FORGE, tokn: "x" } }, "forge.tokn", "one of the known keys"],
  ];

  it.each(BAD)("names the bad field: %j → %s", (input, field, words) => {
    const error = configError(input);
    const issue = error.issues.find((i) => i.path === field);
    expect(issue, `${field} in ${error.message}`).toBeDefined();
    expect(`${issue?.expected} ${issue?.hint ?? ""}`).toContain(words);
  });
});

describe("forge.token is a secret", () => {
  it("is never printed in errors, even when invalid", () => {
    const bad = configError({ forge: { ...FORGE, token: `${TOKEN} with spaces` }, max_sessions: 0 });
    expect(bad.message).toContain("forge.token");
    expect(bad.message).not.toContain(TOKEN);
    const wrongType = configError({ forge: { ...FORGE, token: ["x-secret-in-array"] } });
    expect(wrongType.message).not.toContain("x-secret-in-array");
  });

  it("is listed for the redactor and redacted in the shown config", () => {
    const config = parseRunnerConfig({ forge: FORGE, secrets: { API_KEY: "sk-other-secret" } }, "r");
    expect(runnerConfigSecretValues(config).sort()).toEqual([TOKEN, "sk-other-secret"].sort());
    const redacted = redactRunnerConfig(config);
    expect(redacted.forge).toEqual({
      kind: "github",
      url: "https://github.com",
      repository: "acme/app",
      token: "[REDACTED]",
    });
    expect(JSON.stringify(redacted)).not.toContain(TOKEN);
    expect(config.forge?.token).toBe(TOKEN);
  });
});

describe("forge.app (a GitHub App instead of a token)", () => {
  const KEY =
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEsecretKeyMaterial0123456789\n-----END RSA PRIVATE KEY-----";
  const APP = { id: 123, installation_id: 456, private_key: KEY };
  const appForge = { kind: "github", url: "https://github.com", repository: "acme/app", app: APP };

  it("resolves to the App's auth, lists the key for the redactor and redacts it", () => {
    const config = parseRunnerConfig({ landing: { mode: "pull_request" }, forge: appForge }, "t");
    expect(landingSettingsOf(config).forge?.auth).toEqual({
      kind: "app",
      appId: 123,
      installationId: 456,
      privateKey: KEY,
    });
    expect(runnerConfigSecretValues(config)).toContain(KEY);
    const shown = redactRunnerConfig(config);
    expect(shown.forge?.app).toEqual({ id: 123, installation_id: 456, private_key: "[REDACTED]" });
    expect(shown.forge?.token).toBeUndefined();
    // The redacted config read back (doctor through the gateway) still parses.
    expect(parseRunnerConfig(shown, "redacted").forge?.app?.private_key).toBe("[REDACTED]");
    expect(landingSettingsOf(parseRunnerConfig({ forge: FORGE }, "t")).forge?.auth).toEqual({
      kind: "token",
      token: TOKEN,
    });
  });

  it.each([
    [{ ...appForge, token: TOKEN }, "forge", "exactly one of forge.token", "both"],
    [
      { kind: "github", url: "https://github.com", repository: "acme/app" },
      "forge.token",
      "exactly one of",
      "nothing (missing)",
    ],
    [{ ...appForge, kind: "gitlab" }, "forge.app", "GitLab and Gitea take a token", "an app"],
  ])("refuses %j at %s", (forge, path, expected, received) => {
    const error = configError({ landing: { mode: "pull_request" }, forge });
    const issue = error.issues.find((i) => i.path === path);
    expect(issue?.expected).toContain(expected);
    expect(issue?.received).toBe(received);
  });

  it("names a bad id or key without printing the key", () => {
    const error = configError({
      forge: { ...appForge, app: { id: 0, installation_id: "x", private_key: "not a pem secretvalue" } },
    });
    const paths = error.issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining(["forge.app.id", "forge.app.installation_id", "forge.app.private_key"]),
    );
    expect(error.message).toContain("the App's private key, PEM");
    expect(error.message).not.toContain("secretvalue");
  });
});
