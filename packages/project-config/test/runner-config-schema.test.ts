import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ConfigError } from "@overseer/input-errors";
import { DEFAULT_SANDBOX_LIMITS } from "@overseer/run-contract";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  commandForRole,
  exemptGlobsFor,
  loadRunnerConfigFile,
  parseRunnerConfig,
  type RunnerConfig,
  redactRunnerConfig,
  runnerConfigSecretValues,
} from "../src/index.ts";

/** The Luma runner's config shape (docs/runner-config.md), with a role command filled in. */
const SEED_JSON = `{"argv": ["your-agent-cli", "--prompt-file", "{prompt_file}"], "commands_by_role": {"security": ["secure-agent", "--strict", "{prompt_file}"]}, "git_commits": true, "max_sessions": 1000, "timeout_seconds": 1800, "max_prompt_chars": 80000}`;

/** A Codex argv as a Luma runner project records it. */
const SEED_CODEX = {
  argv: [
    "codex",
    "-c",
    "sandbox_workspace_write.network_access=true",
    "exec",
    "--approve-for-me",
    "--ephemeral",
    "-",
  ],
  max_sessions: 1000,
  timeout_seconds: 1800,
  max_prompt_chars: 80000,
};

function configError(input: unknown, source = "runner.json"): ConfigError {
  try {
    parseRunnerConfig(input, source);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected parseRunnerConfig to throw");
}

describe("parseRunnerConfig", () => {
  it("defaults the sandbox limits to the sandbox's own, the one default of every layer", () => {
    const { sandbox } = parseRunnerConfig({ argv: ["agent", "{prompt_file}"] }, "runner.json");
    expect(sandbox.pids_max).toBe(DEFAULT_SANDBOX_LIMITS.pidsMax);
    expect(sandbox.memory_mb * 1024 * 1024).toBe(DEFAULT_SANDBOX_LIMITS.memoryBytes);
    expect(sandbox.cpu_seconds).toBe(DEFAULT_SANDBOX_LIMITS.cpuSeconds);
  });

  it("accepts the Luma runner JSON as is and fills every Overseer default", () => {
    const config = parseRunnerConfig(JSON.parse(SEED_JSON), "runner.local.json");
    expect(config).toEqual({
      argv: ["your-agent-cli", "--prompt-file", "{prompt_file}"],
      commands_by_role: { security: ["secure-agent", "--strict", "{prompt_file}"] },
      git_commits: true,
      max_sessions: 1000,
      timeout_seconds: 1800,
      max_prompt_chars: 80000,
      idle_timeout_seconds: 0,
      attempts: 3,
      retry_backoff_seconds: 5,
      concurrency: 1,
      agent: null,
      transition_linger_seconds: 0.25,
      model: null,
      prices: {},
      env: {},
      env_allow: [],
      secrets: {},
      network_allow_hosts: [],
      sandbox: { pids_max: 512, memory_mb: 4096, cpu_seconds: 3600, read_only_paths: [] },
      hooks: {},
      landing: {
        mode: "push",
        strategy: "squash",
        pull_request: {
          labels: ["overseer"],
          merge: "manual",
          merge_method: "squash",
          required_approvals: 1,
          required_checks: [],
          on_closed: "cancel",
          prerequisites: "merged",
          poll_seconds: 120,
          log_tail_bytes: 8192,
        },
      },
      files: {},
      probe_argv: [],
      metadata_globs: [],
      budget_usd: null,
      budget_tokens: null,
      plan_approval: "reviewer",
      master_prompt: "",
      role_notes: {},
      git: { author_name: "Overseer Agent", author_email: "agent@overseer.local" },
      pool: "default",
    } satisfies RunnerConfig);
  });

  it("accepts the Luma runner's other examples and an empty config", () => {
    expect(parseRunnerConfig(SEED_CODEX, "codex").argv[0]).toBe("codex");
    expect(
      parseRunnerConfig({ argv: ["x"], max_sessions: 5, timeout_seconds: 30, max_prompt_chars: 1000 }, "s")
        .git_commits,
    ).toBe(true);
    const empty = parseRunnerConfig({}, "empty");
    expect(empty.argv).toEqual([]);
    expect(empty.timeout_seconds).toBe(1800);
    expect(empty.max_sessions).toBe(1000);
    expect(empty.max_prompt_chars).toBe(80000);
  });

  it("accepts every Overseer field", () => {
    const config = parseRunnerConfig(
      {
        argv: ["agent"],
        idle_timeout_seconds: 120,
        attempts: 5,
        retry_backoff_seconds: 0.5,
        concurrency: 2,
        env_allow: ["HOME_CACHE", "_X1"],
        secrets: { API_KEY: "sk-secret-value-123" },
        network_allow_hosts: ["api.openai.com", "*.github.com", "10.0.0.1:8443"],
        sandbox: { driver: "none", pids_max: 64, memory_mb: 512, cpu_seconds: 60 },
        hooks: { setup: { argv: ["npm", "ci"] }, after_run: { argv: ["make", "lint"], timeout_seconds: 10 } },
        landing: { strategy: "merge", check_command: { argv: ["npm", "test"] } },
        files: { ".env": { from_secret: "API_KEY" }, "config/local.json": { content: "{}" } },
        probe_argv: ["agent", "--version"],
        metadata_globs: ["docs/generated/**", "*.lock"],
        budget_usd: 25.5,
        plan_approval: "operator",
        master_prompt: "Be careful.",
        role_notes: { security: "Check inputs." },
        git: { author_name: "Bot", author_email: "bot@example.com" },
      },
      "full.json",
    );
    expect(config.hooks.setup).toEqual({ argv: ["npm", "ci"], timeout_seconds: 600 });
    expect(config.hooks.after_run).toEqual({ argv: ["make", "lint"], timeout_seconds: 10 });
    expect(config.landing).toMatchObject({
      mode: "push",
      strategy: "merge",
      check_command: { argv: ["npm", "test"], timeout_seconds: 600 },
    });
    expect(config.sandbox.driver).toBe("none");
    expect(config.files[".env"]).toEqual({ from_secret: "API_KEY" });
    expect(config.budget_usd).toBe(25.5);
    expect(config.plan_approval).toBe("operator");
    expect(
      parseRunnerConfig({ hooks: { after_run: { argv: ["x"] } } }, "h").hooks.after_run?.timeout_seconds,
    ).toBe(300);
  });

  /** [patch, field path, words of the expected part] */
  const BAD: [Record<string, unknown>, string, string][] = [
    [{ argv: "agent --go" }, "argv", "an array of strings"],
    [{ argv: ["agent", ""] }, "argv[1]", "a non-empty string"],
    [{ argv: ["agent", 7] }, "argv[1]", "a non-empty string"],
    [{ argv: ["a\0b"] }, "argv[0]", "without NUL"],
    [{ commands_by_role: { security: [] } }, "commands_by_role.security", "a non-empty array"],
    [{ commands_by_role: { "two words": ["x"] } }, 'commands_by_role["two words"]', "a role name"],
    [{ commands_by_role: ["x"] }, "commands_by_role", "an object mapping role names"],
    [{ git_commits: "yes" }, "git_commits", "true or false"],
    [{ max_sessions: 0 }, "max_sessions", "an integer from 1"],
    [{ max_sessions: 2.5 }, "max_sessions", "an integer from 1"],
    [{ timeout_seconds: 0 }, "timeout_seconds", "seconds > 0"],
    [{ timeout_seconds: "1800" }, "timeout_seconds", "seconds > 0"],
    [{ max_prompt_chars: -1 }, "max_prompt_chars", "an integer from 1"],
    [{ idle_timeout_seconds: -1 }, "idle_timeout_seconds", "0 disables"],
    [{ attempts: 0 }, "attempts", "an integer from 1 to 100"],
    [{ retry_backoff_seconds: -5 }, "retry_backoff_seconds", "seconds >= 0"],
    [{ concurrency: 0 }, "concurrency", "an integer from 1 to 64"],
    [{ env_allow: ["PATH", "bad-name"] }, "env_allow[1]", "an environment variable name"],
    [{ env_allow: ["OVERSEER_TOKEN"] }, "env_allow[0]", "not starting with OVERSEER_"],
    [{ secrets: { LUMA_TASK_ID: "x" } }, "secrets.LUMA_TASK_ID", "not starting with OVERSEER_ or LUMA_"],
    [{ secrets: { KEY: 12345 } }, "secrets.KEY", "a string"],
    [{ network_allow_hosts: ["https://api.example.com/v1"] }, "network_allow_hosts[0]", "a host name"],
    [{ sandbox: { driver: "podman" } }, "sandbox.driver", "one of bwrap, gvisor, none"],
    [{ sandbox: { driver: "docker" } }, "sandbox.driver", "the docker driver was removed"],
    [{ sandbox: { pids_max: 0 } }, "sandbox.pids_max", "an integer from 1"],
    [{ sandbox: { memory_mb: "2g" } }, "sandbox.memory_mb", "an integer from 16"],
    [{ sandbox: { cpu_seconds: 0 } }, "sandbox.cpu_seconds", "an integer from 1"],
    [{ hooks: { setup: { argv: [] } } }, "hooks.setup.argv", "a non-empty array"],
    [
      { hooks: { after_run: { argv: ["x"], timeout_seconds: 0 } } },
      "hooks.after_run.timeout_seconds",
      "seconds > 0",
    ],
    [{ landing: { strategy: "octopus" } }, "landing.strategy", 'one of "squash", "merge"'],
    [
      { landing: { strategy: "rebase" } },
      "landing.strategy",
      "rebase was removed: it replayed attempts a reviewer rejected",
    ],
    [
      { landing: { check_command: { argv: "npm test" } } },
      "landing.check_command.argv",
      "an array of strings",
    ],
    [
      { landing: { check_command: { argv: ["make"], timeout_seconds: -1 } } },
      "landing.check_command.timeout_seconds",
      "seconds > 0",
    ],
    [{ files: { "/etc/passwd": { content: "x" } } }, 'files["/etc/passwd"]', "checkout-relative file path"],
    [{ files: { "a/../../b": { content: "x" } } }, 'files["a/../../b"]', "checkout-relative file path"],
    [{ files: { ".git/config": { content: "x" } } }, 'files[".git/config"]', "not inside .git"],
    [{ files: { ".env": {} } }, 'files[".env"]', "exactly one of from_secret or content"],
    [{ files: { ".env": { content: "a", from_secret: "B" }, x: 1 } }, 'files[".env"]', "exactly one of"],
    [{ probe_argv: [""] }, "probe_argv[0]", "a non-empty string"],
    [{ metadata_globs: ["/abs/**"] }, "metadata_globs[0]", "checkout-relative glob"],
    [{ metadata_globs: ["../x"] }, "metadata_globs[0]", "no .. segments"],
    [{ budget_usd: -1 }, "budget_usd", "dollars >= 0, or null"],
    [{ budget_usd: "10" }, "budget_usd", "dollars >= 0, or null"],
    [{ plan_approval: "human" }, "plan_approval", "reviewer or operator"],
    [{ master_prompt: 5 }, "master_prompt", "a string"],
    [{ role_notes: { security: 1 } }, "role_notes.security", "a string"],
    [{ git: { author_email: "not an email" } }, "git.author_email", "an e-mail address"],
    [{ git: { author_name: "" } }, "git.author_name", "a non-empty string"],
  ];

  it.each(BAD)("names the bad field: %j → %s", (patch, field, words) => {
    const error = configError({ ...JSON.parse(SEED_JSON), ...patch });
    const issue = error.issues.find((i) => i.path === field);
    expect(issue, `${field} in ${error.message}`).toBeDefined();
    expect(issue?.expected).toContain(words);
    expect(error.message).toContain(
      `runner.json: ${field}: expected ${issue?.expected}, received ${issue?.received}`,
    );
  });

  it("reports every bad field in one error", () => {
    const input = Object.assign({}, ...BAD.map(([patch]) => patch));
    const error = configError(input, "all-bad.json");
    expect(error.name).toBe("ConfigError");
    expect(error.source).toBe("all-bad.json");
    expect(error.issues.length).toBeGreaterThanOrEqual(15);
    const lines = error.message.split("\n").filter((l) => l.startsWith("  all-bad.json: "));
    expect(lines).toHaveLength(error.issues.length);
    for (const line of lines) expect(line).toMatch(/^ {2}all-bad\.json: \S.*: expected .+, received .+/);
  });

  it("rejects unknown top-level keys, listing the known keys and the likely one", () => {
    const error = configError({ ...JSON.parse(SEED_JSON), timeout_second: 60, argvv: ["x"], verbose: true });
    const paths = error.issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(["timeout_second", "argvv", "verbose"]));
    const typo = error.issues.find((i) => i.path === "timeout_second");
    expect(typo?.hint).toBe('did you mean "timeout_seconds"?');
    expect(typo?.expected).toContain(
      "one of the known keys: agent, argv, attempts, budget_tokens, budget_usd, commands_by_role",
    );
    for (const key of ["max_sessions", "max_prompt_chars", "git_commits", "sandbox", "hooks", "secrets"]) {
      expect(error.message).toContain(key);
    }
    expect(error.issues.find((i) => i.path === "verbose")?.hint).toBe("remove it or fix its spelling");
  });

  it("rejects unknown nested keys too", () => {
    const error = configError({
      sandbox: { drvier: "bwrap" },
      hooks: { setup: { argv: ["x"], timeout: 5 } },
      git: { email: "a@b" },
    });
    expect(error.issues.map((i) => [i.path, i.hint])).toEqual(
      expect.arrayContaining([
        ["sandbox.drvier", 'did you mean "driver"?'],
        ["hooks.setup.timeout", expect.any(String)],
        ["git.email", expect.any(String)],
      ]),
    );
  });

  it("rejects a non-object config", () => {
    for (const input of [null, [], "argv", 3]) {
      const error = configError(input);
      expect(error.issues[0]?.path).toBe("");
      expect(error.message).toContain("runner.json: (top level): expected an object");
    }
  });

  it("checks fields against each other", () => {
    const error = configError({
      secrets: { API_KEY: "value-123456" },
      env_allow: ["API_KEY"],
      files: { ".env": { from_secret: "MISSING" } },
    });
    expect(error.issues.map((i) => i.path)).toEqual(["env_allow[0]", 'files[".env"].from_secret']);
    expect(error.issues[1]?.expected).toContain("(API_KEY)");
  });

  it("reports cross-field problems together with field errors", () => {
    const error = configError({ max_sessions: 0, files: { ".env": { from_secret: "NOPE" } } });
    expect(error.issues.map((i) => i.path)).toEqual(["max_sessions", 'files[".env"].from_secret']);
  });

  it("never prints secret values, even when they are invalid", () => {
    const error = configError({
      secrets: {
        GOOD: "correct-horse-battery",
        BAD: ["staple-horse-battery"],
        "bad name": "sneaky-secret-value",
      },
      master_prompt: 1,
    });
    expect(error.message).not.toContain("staple-horse-battery");
    expect(error.message).not.toContain("sneaky-secret-value");
    expect(error.message).not.toContain("correct-horse-battery");
    expect(error.message).toContain("secrets.BAD: expected a string, received an array (secret, hidden)");
    expect(configError({ secrets: "whole-secret-string" }).message).not.toContain("whole-secret-string");
  });

  it("redacts token-shaped values it echoes", () => {
    const error = configError({
      argv: ["agent", "--key", "ghp_abcdefghijklmnopqrstuvwxyz0123"],
      max_sessions: "x",
    });
    expect(error.message).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123");
  });
});

describe("secrets helpers", () => {
  const config = parseRunnerConfig({ secrets: { A_TOKEN: "alpha-secret-1", B_TOKEN: "beta-secret-2" } }, "s");

  it("lists secret values for the redactor", () => {
    expect(runnerConfigSecretValues(config).sort()).toEqual(["alpha-secret-1", "beta-secret-2"]);
  });

  it("produces a redacted copy without touching the original", () => {
    const redacted = redactRunnerConfig(config);
    expect(redacted.secrets).toEqual({ A_TOKEN: "[REDACTED]", B_TOKEN: "[REDACTED]" });
    expect(JSON.stringify(redacted)).not.toContain("secret-1");
    expect(config.secrets.A_TOKEN).toBe("alpha-secret-1");
  });
});

describe("exemptGlobsFor", () => {
  it("always includes .overseer/** before the project's metadata globs", () => {
    expect(exemptGlobsFor(parseRunnerConfig({}, "x"))).toEqual([".overseer/**"]);
    expect(exemptGlobsFor(parseRunnerConfig({ metadata_globs: ["gen/**"] }, "x"))).toEqual([
      ".overseer/**",
      "gen/**",
    ]);
  });
});

describe("commandForRole", () => {
  const base = ["agent", "{prompt_file}"];
  const security = ["secure-agent"];
  const reviewer = ["review-agent"];
  const withReviewer = parseRunnerConfig({ argv: base, commands_by_role: { security, reviewer } }, "r");
  const withoutReviewer = parseRunnerConfig({ argv: base, commands_by_role: { security } }, "r");

  it("review: reviewer command first", () => {
    expect(commandForRole(withReviewer, "security", "review")).toEqual(reviewer);
    expect(commandForRole(withReviewer, "docs", "review")).toEqual(reviewer);
  });

  it("review: else the task role's command, else argv", () => {
    expect(commandForRole(withoutReviewer, "security", "review")).toEqual(security);
    expect(commandForRole(withoutReviewer, "docs", "review")).toEqual(base);
  });

  it("execute and resolve: role command, else argv; never the reviewer command", () => {
    for (const action of ["execute", "resolve"] as const) {
      expect(commandForRole(withReviewer, "security", action)).toEqual(security);
      expect(commandForRole(withReviewer, "docs", action)).toEqual(base);
    }
  });

  it("a task whose role is reviewer executes with the reviewer command", () => {
    expect(commandForRole(withReviewer, "reviewer", "execute")).toEqual(reviewer);
  });

  it("returns an empty argv when the harness is not configured", () => {
    const config = parseRunnerConfig({}, "empty");
    expect(commandForRole(config, "general", "execute")).toEqual([]);
    expect(commandForRole(config, "general", "review")).toEqual([]);
  });

  it("is not fooled by role names that exist on Object.prototype", () => {
    for (const role of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(commandForRole(withoutReviewer, role, "execute")).toEqual(base);
    }
  });

  it("returns a copy the caller may change", () => {
    const argv = commandForRole(withReviewer, "docs", "execute") as string[];
    argv.push("--extra");
    expect(withReviewer.argv).toEqual(base);
  });
});

describe("loadRunnerConfigFile", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "overseer-runner-config-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads a Luma runner JSON file", async () => {
    const file = path.join(dir, "runner.local.json");
    await writeFile(file, SEED_JSON);
    const config = await loadRunnerConfigFile(file);
    expect(config.commands_by_role.security).toEqual(["secure-agent", "--strict", "{prompt_file}"]);
  });

  it("reads YAML by extension", async () => {
    for (const name of ["runner.yaml", "runner.yml"]) {
      const file = path.join(dir, name);
      await writeFile(
        file,
        "argv: [agent, '{prompt_file}']\nsandbox:\n  memory_mb: 1024\nhooks:\n  setup:\n    argv: [npm, ci]\n",
      );
      const config = await loadRunnerConfigFile(file);
      expect(config.argv).toEqual(["agent", "{prompt_file}"]);
      expect(config.sandbox.memory_mb).toBe(1024);
      expect(config.hooks.setup?.timeout_seconds).toBe(600);
    }
  });

  it("names the file in field errors", async () => {
    const file = path.join(dir, "runner.json");
    await writeFile(file, JSON.stringify({ max_sessions: -1 }));
    const error = await loadRunnerConfigFile(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(`${file}: max_sessions: expected an integer from 1`);
  });

  it("reports JSON and YAML syntax errors with their line", async () => {
    const json = path.join(dir, "broken.json");
    await writeFile(json, '{\n  "argv": ["a",\n}\n');
    const jsonError = (await loadRunnerConfigFile(json).catch((e: unknown) => e)) as ConfigError;
    expect(jsonError).toBeInstanceOf(ConfigError);
    expect(jsonError.message).toMatch(/expected valid JSON, received line 3, column \d+/);

    const yaml = path.join(dir, "broken.yaml");
    await writeFile(yaml, "argv: [a, b\nmax_sessions: 3\n");
    const yamlError = (await loadRunnerConfigFile(yaml).catch((e: unknown) => e)) as ConfigError;
    expect(yamlError).toBeInstanceOf(ConfigError);
    expect(yamlError.message).toMatch(/expected valid YAML, received line \d+, column \d+/);
  });

  it("reports a missing file as a ConfigError", async () => {
    const error = (await loadRunnerConfigFile(path.join(dir, "nope.json")).catch(
      (e: unknown) => e,
    )) as ConfigError;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain("received error ENOENT");
  });
});
