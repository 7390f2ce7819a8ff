import type { AgentKind } from "./agent-kinds.ts";
import type { RunnerConfigInput } from "./runner-config-schema.ts";

/**
 * Runner configs for real agent CLIs that work inside Overseer's sandbox (`overseer init
 * --agent NAME`). Every preset follows the same rules:
 * - the CLI's own sandbox and approval prompts are bypassed: Overseer's sandbox is the boundary,
 *   and a nested bwrap/seatbelt fails inside it (bwrap: "Creating new namespace failed: ENOSPC");
 * - the prompt is passed the way the CLI reads it (stdin where it can, else the prompt file);
 * - the API key travels through `secrets` (redacted everywhere), never on the command line;
 * - model, provider and base URL are settings of the preset, and the API host (with its port
 *   when the base URL names one) is put into `network_allow_hosts`;
 * - `agent` names the CLI so the worker reads usage and failure causes from its output.
 * A custom argv stays first-class: a preset is only a starting config, every key can be edited.
 */

export interface AgentPresetOptions {
  /** Model name the CLI asks for. Default: the preset's. */
  model?: string;
  /** API base URL (a company gateway, a local server). Default: the vendor's public API. */
  baseUrl?: string;
  /** Program to run: a name on the sandbox's PATH or an absolute path. Default: the CLI's name. */
  bin?: string;
  /** Value of the API key secret. Default: read from `keyEnv` in `env`, else empty (set it later). */
  apiKey?: string;
  /** Environment the key is read from (the `overseer init` process's). */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface AgentPresetInfo {
  kind: AgentKind;
  /** The CLI's package (npm) and what it is called. */
  npmPackage: string;
  bin: string;
  /** Secret variable holding the API key. */
  keyEnv: string;
  /**
   * Secret variable holding the key when `--base-url` names a gateway that the CLI reaches
   * instead of its vendor's sign-in (Copilot's bring-your-own-key provider). Default: `keyEnv`.
   */
  gatewayKeyEnv?: string;
  /** Variable of the preset's `env` that names that gateway (so a config says which key it uses). */
  gatewayBaseUrlEnv?: string;
  defaultModel: string;
  defaultBaseUrl: string;
  /** Hosts the CLI needs besides the API host (none for most). */
  extraHosts: readonly string[];
  /** How usage is reported on its output (see usage-harvester.ts in @overseer/harness). */
  usage: string;
}

export const AGENT_PRESETS: Readonly<Record<AgentKind, AgentPresetInfo>> = {
  codex: {
    kind: "codex",
    npmPackage: "@openai/codex",
    bin: "codex",
    keyEnv: "OPENAI_API_KEY",
    defaultModel: "gpt-5-codex",
    defaultBaseUrl: "https://api.openai.com/v1",
    extraHosts: [],
    usage:
      "its session rollout (a token_usage_record per model call, kept in the run's control dir) and `codex exec --json` turn.completed events",
  },
  claude: {
    kind: "claude",
    npmPackage: "@anthropic-ai/claude-code",
    bin: "claude",
    keyEnv: "ANTHROPIC_API_KEY",
    defaultModel: "claude-sonnet-4-5",
    defaultBaseUrl: "https://api.anthropic.com",
    extraHosts: [],
    usage:
      "`claude -p --output-format stream-json` assistant events (per message) and its result event (tokens and total_cost_usd)",
  },
  opencode: {
    kind: "opencode",
    npmPackage: "opencode-ai",
    bin: "opencode",
    keyEnv: "OPENAI_API_KEY",
    defaultModel: "gpt-5",
    defaultBaseUrl: "https://api.openai.com/v1",
    extraHosts: [],
    usage: "`opencode run --format json` step_finish events",
  },
  gemini: {
    kind: "gemini",
    npmPackage: "@google/gemini-cli",
    bin: "gemini",
    keyEnv: "GEMINI_API_KEY",
    defaultModel: "gemini-2.5-pro",
    defaultBaseUrl: "https://generativelanguage.googleapis.com",
    extraHosts: [],
    usage: "`gemini --output-format stream-json` result stats",
  },
  copilot: {
    kind: "copilot",
    npmPackage: "@github/copilot",
    bin: "copilot",
    keyEnv: "COPILOT_GITHUB_TOKEN",
    gatewayKeyEnv: "COPILOT_PROVIDER_API_KEY",
    gatewayBaseUrlEnv: "COPILOT_PROVIDER_BASE_URL",
    defaultModel: "gpt-5",
    defaultBaseUrl: "https://api.githubcopilot.com",
    // The token is checked at api.github.com (copilot_internal/user), which names the plan's
    // model endpoint: api.githubcopilot.com or a subdomain (api.individual., api.business., …).
    extraHosts: ["api.github.com", "*.githubcopilot.com"],
    usage:
      "its session file session-state/ID/events.jsonl (session.shutdown model metrics, or the per-call usage records of a session killed before it), kept in the run's control dir",
  },
};

/** The secret variable a preset's key goes in: the gateway's when `baseUrl` names one. */
export function presetKeyEnv(kind: AgentKind, baseUrl?: string): string {
  const info = AGENT_PRESETS[kind];
  return baseUrl !== undefined && info.gatewayKeyEnv ? info.gatewayKeyEnv : info.keyEnv;
}

/** The key variable a runner config of `kind` authenticates with, judged from its `env`. */
export function configKeyEnv(kind: AgentKind, env: Readonly<Record<string, string>>): string {
  const info = AGENT_PRESETS[kind];
  return info.gatewayBaseUrlEnv && env[info.gatewayBaseUrlEnv] !== undefined
    ? presetKeyEnv(kind, env[info.gatewayBaseUrlEnv])
    : info.keyEnv;
}

/**
 * Codex's home (`CODEX_HOME`) inside the run's control dir: the worker reads the session
 * rollout there (`sessions/…/rollout-*.jsonl`, a usage record per model call, written as each
 * call ends), so a run stopped mid-turn keeps what it spent.
 */
export const CODEX_HOME_DIR = ".codex-home";

/** Copilot's home inside the run's control dir (the worker reads its session files there). */
export const COPILOT_HOME_DIR = ".copilot-home";

/**
 * The Gemini CLI's home (`GEMINI_CLI_HOME`) inside the run's control dir: a fresh directory per
 * run whatever the sandbox driver (a driver that keeps the worker's HOME never sees its settings
 * overwritten), never taken for a transition.
 */
export const GEMINI_HOME_DIR = ".gemini-home";

/**
 * The Gemini CLI's user settings (`$GEMINI_CLI_HOME/.gemini/settings.json`), written by the
 * preset's command before the CLI starts:
 * - `security.auth.selectedType`: the API key. Without it the CLI picks its auth from the
 *   environment, and with GOOGLE_GEMINI_BASE_URL set that is its "gateway" type, which its
 *   headless mode refuses ("Invalid auth method selected."); with it, GEMINI_API_KEY is used and
 *   GOOGLE_GEMINI_BASE_URL still sets where requests go;
 * - no usage statistics (on by default, sent to a Google logging host the sandbox does not
 *   allow). Update checks (interactive mode only) and the IDE integration (off unless
 *   `ide.enabled`) need nothing.
 */
export const GEMINI_SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  privacy: { usageStatisticsEnabled: false },
} as const;

/** Provider id the opencode preset defines in its inline config (models are `overseer/MODEL`). */
const OPENCODE_PROVIDER_ID = "overseer";

/**
 * opencode's config (`OPENCODE_CONFIG_CONTENT`): one OpenAI-compatible provider (Chat
 * Completions through the `@ai-sdk/openai-compatible` package bundled in the binary) at the base
 * URL, its key read from the secret's variable, the model declared so no models.dev catalog is
 * needed; no autoupdate, sharing or snapshot (a git copy of the checkout per step).
 */
function opencodeConfig(baseUrl: string, model: string, keyEnv: string): string {
  return JSON.stringify({
    $schema: "https://opencode.ai/config.json",
    provider: {
      [OPENCODE_PROVIDER_ID]: {
        npm: "@ai-sdk/openai-compatible",
        name: "Overseer preset",
        options: { baseURL: baseUrl, apiKey: `{env:${keyEnv}}` },
        models: { [model]: {} },
      },
    },
    model: `${OPENCODE_PROVIDER_ID}/${model}`,
    autoupdate: false,
    share: "disabled",
    snapshot: false,
  });
}

/** Seconds a preset gives the CLI after the transition to print its final usage. */
export const PRESET_TRANSITION_LINGER_SECONDS = 20;

/** `host` or `host:port` of a base URL, as a `network_allow_hosts` entry; throws on a bad URL. */
export function allowHostOf(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error(`--base-url must be an absolute http(s) URL, received ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new Error(`--base-url must be an http:// or https:// URL, received ${JSON.stringify(baseUrl)}`);
  return url.port === "" ? url.hostname : `${url.hostname}:${url.port}`;
}

/** TOML basic string (Codex `-c` values are parsed as TOML). */
function toml(value: string): string {
  return JSON.stringify(value);
}

/**
 * The runner config a preset writes; every key stays editable afterwards. Its `probe_argv` (the
 * non-mutating call of `overseer doctor --deep`) is the run command itself: doctor runs it in an
 * empty scratch checkout inside the run's sandbox with a one-line prompt asking for no action, so
 * the CLI, the key, the base URL and the egress allow-list are all checked against the real API.
 */
export function agentPresetConfig(kind: AgentKind, options: AgentPresetOptions = {}): RunnerConfigInput {
  const config = presetCommand(kind, options);
  return { ...config, probe_argv: [...(config.argv ?? [])] };
}

function presetCommand(kind: AgentKind, options: AgentPresetOptions): RunnerConfigInput {
  const info = AGENT_PRESETS[kind];
  const model = options.model ?? info.defaultModel;
  const baseUrl = options.baseUrl ?? info.defaultBaseUrl;
  const bin = options.bin ?? info.bin;
  const keyEnv = presetKeyEnv(kind, options.baseUrl);
  const gateway = keyEnv !== info.keyEnv;
  const key = options.apiKey ?? options.env?.[keyEnv];
  const hosts = [allowHostOf(baseUrl), ...(gateway ? [] : info.extraHosts)];
  const common = {
    agent: kind,
    model,
    secrets: key ? { [keyEnv]: key } : {},
    network_allow_hosts: [...new Set(hosts)],
    transition_linger_seconds: PRESET_TRANSITION_LINGER_SECONDS,
  } satisfies RunnerConfigInput;
  switch (kind) {
    case "codex":
      return {
        ...common,
        // `exec` reads the prompt from stdin with `-`; --json prints usage per turn; the bypass
        // turns off Codex's own (nested, failing) sandbox; a custom provider carries the base URL.
        // CODEX_HOME in the control dir keeps the session rollout (a usage record per model
        // call) where the worker reads it, fresh for every run.
        argv: [
          "/bin/sh",
          "-c",
          `export CODEX_HOME="$OVERSEER_CONTROL_DIR/${CODEX_HOME_DIR}" && mkdir -p "$CODEX_HOME" && exec "$0" "$@"`,
          bin,
          "exec",
          "--json",
          "--dangerously-bypass-approvals-and-sandbox",
          "--skip-git-repo-check",
          "-c",
          "model_provider=overseer",
          "-c",
          `model_providers.overseer={name=${toml("overseer")},base_url=${toml(baseUrl)},env_key=${toml(info.keyEnv)},wire_api="responses"}`,
          "-m",
          model,
          "-",
        ],
      };
    case "claude":
      return {
        ...common,
        // -p reads the prompt from stdin; stream-json ends with a result event carrying usage and
        // cost. IS_SANDBOX=1 lets --dangerously-skip-permissions run (the sandbox is the boundary).
        argv: [
          bin,
          "-p",
          "--output-format",
          "stream-json",
          "--verbose",
          "--dangerously-skip-permissions",
          "--model",
          model,
        ],
        env: {
          ANTHROPIC_BASE_URL: baseUrl,
          IS_SANDBOX: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_AUTOUPDATER: "1",
        },
      };
    case "opencode":
      return {
        ...common,
        // `opencode run` takes the message as an argument: read from the prompt file. --auto
        // approves every permission the config does not deny (the sandbox is the boundary).
        // --print-logs at WARN puts its "stream error" lines on stderr: it retries a rate limit,
        // an exhausted quota or an unreachable gateway forever and prints nothing else, so those
        // lines are what the worker ends such a run on (cliRetryWatch in @overseer/harness).
        argv: [
          "/bin/sh",
          "-c",
          'exec "$0" run --format json --auto --print-logs --log-level WARN --model "$1" "$(cat "$2")"',
          bin,
          `${OPENCODE_PROVIDER_ID}/${model}`,
          "{prompt_file}",
        ],
        // The inline config carries provider, base URL and model; the flags keep opencode off
        // the internet (models.dev catalog, self-update, language-server downloads).
        env: {
          OPENCODE_CONFIG_CONTENT: opencodeConfig(baseUrl, model, keyEnv),
          OPENCODE_DISABLE_MODELS_FETCH: "1",
          OPENCODE_DISABLE_AUTOUPDATE: "1",
          OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
        },
      };
    case "gemini":
      return {
        ...common,
        // Not a TTY: the prompt arrives on stdin; --yolo approves tool calls (no nested sandbox).
        // The shell writes GEMINI_SETTINGS into the CLI's home in the control dir first.
        argv: [
          "/bin/sh",
          "-c",
          `export GEMINI_CLI_HOME="$OVERSEER_CONTROL_DIR/${GEMINI_HOME_DIR}" && mkdir -p "$GEMINI_CLI_HOME/.gemini" && printf "%s\\n" "$1" > "$GEMINI_CLI_HOME/.gemini/settings.json" && shift && exec "$0" "$@"`,
          bin,
          JSON.stringify(GEMINI_SETTINGS),
          "--yolo",
          "--output-format",
          "stream-json",
          "-m",
          model,
        ],
        // GEMINI_CLI_TRUST_WORKSPACE: the checkout is trusted (an untrusted folder turns --yolo
        // back into approval prompts, which a headless run cannot answer). GEMINI_CLI_NO_RELAUNCH:
        // no second Node process whose heap is sized to half the HOST's memory (the sandbox's
        // memory_mb is the cap that counts), one CLI start fewer per run.
        env: {
          GOOGLE_GEMINI_BASE_URL: baseUrl,
          GEMINI_SANDBOX: "false",
          GEMINI_CLI_TRUST_WORKSPACE: "true",
          GEMINI_CLI_NO_RELAUNCH: "true",
        },
      };
    case "copilot":
      return {
        ...common,
        // Not a TTY: the prompt arrives on stdin (no argument-length limit). --allow-all turns
        // off Copilot's tool, path and URL approvals (the sandbox is the boundary), --no-ask-user
        // keeps it from waiting for answers, and the key is hidden from the shells it starts.
        // Copilot prints no token usage; its session file does, so COPILOT_HOME sits in the
        // run's control dir (a dot directory, never taken for a transition) where the worker
        // reads it after the run.
        argv: [
          "/bin/sh",
          "-c",
          `COPILOT_HOME="$OVERSEER_CONTROL_DIR/${COPILOT_HOME_DIR}" exec "$0" --allow-all --no-ask-user --no-auto-update --disable-client-telemetry --secret-env-vars="$1" --model "$2"`,
          bin,
          keyEnv,
          model,
        ],
        // With --base-url: Copilot's bring-your-own-key provider (an OpenAI-compatible gateway
        // speaking the Responses API), offline from GitHub (no sign-in, telemetry or updates).
        env: gateway
          ? {
              COPILOT_PROVIDER_BASE_URL: baseUrl,
              COPILOT_PROVIDER_TYPE: "openai",
              COPILOT_PROVIDER_WIRE_API: "responses",
              COPILOT_OFFLINE: "true",
              COPILOT_AUTO_UPDATE: "false",
            }
          : { COPILOT_AUTO_UPDATE: "false" },
      };
  }
}
