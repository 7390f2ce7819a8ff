import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRedactor } from "@overseer/input-errors";
import {
  AGENT_KINDS,
  AGENT_PRESETS,
  type AgentKind,
  agentPresetConfig,
  COPILOT_HOME_DIR,
  configKeyEnv,
  GEMINI_HOME_DIR,
  GEMINI_SETTINGS,
  parseRunnerConfig,
} from "@overseer/project-config";
import { afterEach, describe, expect, it } from "vitest";
import { expandArgv, runHarness } from "../src/index.ts";
import { cleanupAll, makeRunDirs, makeTempDir, runEnv, silentLogger } from "./support/harness-fixtures.ts";

/**
 * Each preset's runner config, run the way a run runs it (argv placeholders expanded, the prompt
 * on stdin and in the prompt file, the harness env) with a stand-in for the CLI that records
 * what it was given: its arguments, its stdin and its environment. So the prompt reaches each
 * CLI the way that CLI reads it (stdin, or an argument read from the prompt file), keys travel
 * as secrets and never on the command line, and the settings variables are set.
 */

afterEach(cleanupAll);

/** A prompt that would break any naive quoting. */
const PROMPT = `Fix it's "quoted" $(touch /tmp/pwned) \`id\` $HOME\nsecond line; echo done\n`;
const KEY = "sk-test-preset-0123456789";

/** Stand-in CLI: records argv (one per line, NUL-separated), stdin and env, then exits 0. */
function recordingCli(dir: string): string {
  const bin = join(dir, "fake-cli");
  writeFileSync(
    bin,
    `#!/bin/sh
out="$RECORD_DIR"
printf '%s\\0' "$@" > "$out/argv"
cat > "$out/stdin"
env > "$out/env"
`,
  );
  chmodSync(bin, 0o755);
  return bin;
}

async function runPreset(kind: AgentKind, options: { baseUrl?: string } = {}) {
  const dirs = makeRunDirs();
  const record = makeTempDir();
  const bin = recordingCli(record);
  const config = parseRunnerConfig(
    agentPresetConfig(kind, { bin, model: `model-${kind}`, apiKey: KEY, ...options }),
    `preset ${kind}`,
  );
  writeFileSync(dirs.promptFile, PROMPT);
  const argv = expandArgv(config.argv, {
    root: dirs.checkout,
    task: "S00-001",
    role: "dev",
    agent: "execute-dev-0123456789ab",
    action: "execute",
    prompt_file: dirs.promptFile,
  });
  const env = runEnv(dirs, { PATH: "/usr/bin:/bin", RECORD_DIR: record, ...config.env, ...config.secrets });
  const result = await runHarness({
    argv,
    cwd: dirs.checkout,
    env,
    prompt: PROMPT,
    controlDir: dirs.control,
    timeoutMs: 20_000,
    killGraceMs: 500,
    redact: createRedactor([KEY]),
    logger: silentLogger,
  });
  expect(result.exitCode).toBe(0);
  const recordedEnv = Object.fromEntries(
    readFileSync(join(record, "env"), "utf8")
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  return {
    config,
    dirs,
    argv: readFileSync(join(record, "argv"), "utf8").split("\0").slice(0, -1),
    stdin: readFileSync(join(record, "stdin"), "utf8"),
    env: recordedEnv as Record<string, string>,
  };
}

describe("agent presets as a run starts them", () => {
  it("opencode: `run --format json --auto --print-logs --log-level WARN --model overseer/M` with the prompt as one argument read from the prompt file", async () => {
    const run = await runPreset("opencode", { baseUrl: "https://llm.corp.example:8443/v1" });
    // $(cat) drops the trailing newline; everything else arrives byte for byte, unexpanded.
    expect(run.argv).toEqual([
      "run",
      "--format",
      "json",
      "--auto",
      "--print-logs",
      "--log-level",
      "WARN",
      "--model",
      "overseer/model-opencode",
      PROMPT.trimEnd(),
    ]);
    // The inline config defines the provider at the base URL; the key stays in its variable.
    expect(JSON.parse(run.env.OPENCODE_CONFIG_CONTENT ?? "{}")).toMatchObject({
      provider: {
        overseer: {
          npm: "@ai-sdk/openai-compatible",
          options: { baseURL: "https://llm.corp.example:8443/v1", apiKey: "{env:OPENAI_API_KEY}" },
          models: { "model-opencode": {} },
        },
      },
      model: "overseer/model-opencode",
      autoupdate: false,
      share: "disabled",
      snapshot: false,
    });
    expect(run.env.OPENCODE_CONFIG_CONTENT).not.toContain(KEY);
    expect(run.env).toMatchObject({
      OPENAI_API_KEY: KEY,
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    });
    expect(run.config.network_allow_hosts).toEqual(["llm.corp.example:8443"]);
    expect(existsSync("/tmp/pwned")).toBe(false);
  });

  it("gemini: headless with --yolo and stream-json, the prompt on stdin, its own sandbox off, API-key auth in its settings", async () => {
    const run = await runPreset("gemini", { baseUrl: "http://10.0.0.7:8080" });
    expect(run.argv).toEqual(["--yolo", "--output-format", "stream-json", "-m", "model-gemini"]);
    expect(run.stdin).toBe(PROMPT);
    expect(run.env).toMatchObject({
      GEMINI_API_KEY: KEY,
      GEMINI_SANDBOX: "false",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      GEMINI_CLI_NO_RELAUNCH: "true",
      GOOGLE_GEMINI_BASE_URL: "http://10.0.0.7:8080",
    });
    // Its home is in the control dir, settings written before the CLI starts.
    expect(run.env.GEMINI_CLI_HOME).toBe(join(run.dirs.control, GEMINI_HOME_DIR));
    const settings = readFileSync(
      join(run.dirs.control, GEMINI_HOME_DIR, ".gemini", "settings.json"),
      "utf8",
    );
    expect(JSON.parse(settings)).toEqual(GEMINI_SETTINGS);
    expect(run.config.network_allow_hosts).toEqual(["10.0.0.7:8080"]);
    expect(agentPresetConfig("gemini").network_allow_hosts).toEqual(["generativelanguage.googleapis.com"]);
  });

  it("copilot: headless with every approval off, the prompt on stdin, COPILOT_HOME in the control dir", async () => {
    const run = await runPreset("copilot");
    expect(run.argv).toEqual([
      "--allow-all",
      "--no-ask-user",
      "--no-auto-update",
      "--disable-client-telemetry",
      "--secret-env-vars=COPILOT_GITHUB_TOKEN",
      "--model",
      "model-copilot",
    ]);
    expect(run.stdin).toBe(PROMPT);
    expect(run.env.COPILOT_GITHUB_TOKEN).toBe(KEY);
    expect(run.env.COPILOT_AUTO_UPDATE).toBe("false");
    expect(run.env.COPILOT_PROVIDER_BASE_URL).toBeUndefined();
    expect(run.env.COPILOT_HOME).toBe(join(run.dirs.control, COPILOT_HOME_DIR));
    expect(run.config.network_allow_hosts).toEqual([
      "api.githubcopilot.com",
      "api.github.com",
      "*.githubcopilot.com",
    ]);
    expect(configKeyEnv("copilot", run.config.env)).toBe("COPILOT_GITHUB_TOKEN");
  });

  it("copilot with --base-url: its bring-your-own-key provider, offline from GitHub", async () => {
    const run = await runPreset("copilot", { baseUrl: "https://llm.corp.example:8443/v1" });
    expect(run.argv).toContain("--secret-env-vars=COPILOT_PROVIDER_API_KEY");
    expect(run.env).toMatchObject({
      COPILOT_PROVIDER_BASE_URL: "https://llm.corp.example:8443/v1",
      COPILOT_PROVIDER_TYPE: "openai",
      COPILOT_PROVIDER_WIRE_API: "responses",
      COPILOT_PROVIDER_API_KEY: KEY,
      COPILOT_OFFLINE: "true",
    });
    expect(run.env.COPILOT_GITHUB_TOKEN).toBeUndefined();
    expect(run.config.secrets).toEqual({ COPILOT_PROVIDER_API_KEY: KEY });
    // No GitHub host: only the gateway is reachable.
    expect(run.config.network_allow_hosts).toEqual(["llm.corp.example:8443"]);
    expect(configKeyEnv("copilot", run.config.env)).toBe("COPILOT_PROVIDER_API_KEY");
    expect(
      agentPresetConfig("copilot", {
        baseUrl: "https://llm.corp.example/v1",
        env: { COPILOT_PROVIDER_API_KEY: "from-env", COPILOT_GITHUB_TOKEN: "ghu-unused" },
      }).secrets,
    ).toEqual({ COPILOT_PROVIDER_API_KEY: "from-env" });
  });

  it("codex and claude: the prompt on stdin, their own sandboxes bypassed", async () => {
    const codex = await runPreset("codex");
    expect(codex.argv.at(-1)).toBe("-");
    expect(codex.argv).toContain("--dangerously-bypass-approvals-and-sandbox");
    expect(codex.stdin).toBe(PROMPT);
    const claude = await runPreset("claude");
    expect(claude.argv).toContain("--dangerously-skip-permissions");
    expect(claude.env).toMatchObject({ IS_SANDBOX: "1", ANTHROPIC_API_KEY: KEY });
    expect(claude.stdin).toBe(PROMPT);
  });

  it("every preset: the key only in secrets, never on the command line; agent and linger set", () => {
    for (const kind of AGENT_KINDS) {
      const config = parseRunnerConfig(agentPresetConfig(kind, { apiKey: KEY }), kind);
      expect(config.secrets).toEqual({ [AGENT_PRESETS[kind].keyEnv]: KEY });
      expect(JSON.stringify(config.argv)).not.toContain(KEY);
      expect(JSON.stringify(config.env)).not.toContain(KEY);
      expect(config.agent).toBe(kind);
      expect(config.transition_linger_seconds).toBeGreaterThan(0);
      expect(config.probe_argv.length).toBeGreaterThan(0);
    }
  });

  it("every preset: the key is read from the init environment, absent means an empty secret store", () => {
    for (const kind of AGENT_KINDS) {
      const keyEnv = AGENT_PRESETS[kind].keyEnv;
      expect(agentPresetConfig(kind, { env: { [keyEnv]: "from-env" } }).secrets).toEqual({
        [keyEnv]: "from-env",
      });
      expect(agentPresetConfig(kind, { env: {} }).secrets).toEqual({});
    }
  });
});
