/**
 * Names the cause of a run that ended without a transition, from the last lines of its output,
 * so the operator reads "nested sandbox refused: …" instead of "ended without a transition".
 *
 * `configuration` causes cannot be fixed by retrying (the same config fails the same way): the
 * worker reports them as misconfigured, which pauses the project with an incident naming the
 * fix instead of retries and resolver chains. Only the run's last lines are looked at, and only
 * messages that CLIs and the sandbox print themselves.
 */

export interface FailureCause {
  /** Short machine name. */
  code:
    | "nested_sandbox"
    | "agent_command_missing"
    | "cli_missing"
    | "auth_refused"
    | "model_not_found"
    | "quota_exhausted"
    | "rate_limited"
    | "gateway_unreachable"
    | "egress_refused";
  /** One line for the operator: what happened, with the line that shows it. */
  message: string;
  /** What to do about it. */
  fix: string;
  /** True when retrying cannot help. */
  configuration: boolean;
}

/** Lines of output the classifier and "ended without a transition" details carry. */
export const FAILURE_TAIL_LINES = 20;

/**
 * Credential refusals as the model APIs and the CLIs print them. A bare "401" or "Unauthorized"
 * is not enough (a line number, an HTTP status in the project's own tests, a test named "invalid
 * api key"): each shape is an API error body or a CLI's own error line, matched case-sensitively.
 */
const AUTH_FAILURE_SHAPES = new RegExp(
  `[^\n]*(?:${[
    // Anthropic error body: {"type":"error","error":{"type":"authentication_error",…}}
    String.raw`"type"\s*:\s*"authentication_error"`,
    // OpenAI error body: {"error":{…,"code":"invalid_api_key"}}
    String.raw`"code"\s*:\s*"invalid_api_key"`,
    // Google AI: "API key not valid. Please pass a valid API key." / reason API_KEY_INVALID
    String.raw`"reason"\s*:\s*"API_KEY_INVALID"`,
    String.raw`API key not valid\. Please pass a valid API key`,
    // Gemini CLI without its key: "When using Gemini API, you must specify the GEMINI_API_KEY …"
    "When using Gemini API, you must specify the GEMINI_API_KEY environment variable",
    // Codex: "unexpected status 401 Unauthorized: …", "exceeded retry limit, last status: 401 Unauthorized"
    "(?:unexpected status|last status:) 401 Unauthorized",
    // Claude Code: "API Error: 401 {…}", "Invalid API key · Please run /login"
    String.raw`API Error: 401\b`,
    "Invalid API key · (?:Please run /login|Fix external API key)",
    // Claude Code 2.1 stream-json: {"type":"system","subtype":"api_retry",…,"error_status":401,
    // "error":"authentication_failed"} while it retries, then a result with "api_error_status":401
    String.raw`"subtype"\s*:\s*"api_retry"[^\n]*"error_status"\s*:\s*40[13]\b`,
    String.raw`"error"\s*:\s*"authentication_failed"`,
    String.raw`"api_error_status"\s*:\s*40[13]\b`,
    // The vendors' own messages inside a body the CLI printed
    "Incorrect API key provided: ",
    "invalid x-api-key",
    // opencode `run --format json`: {"type":"error",…,"error":{"name":"APIError","data":
    // {"message":"…","statusCode":401,…}}} (whatever body the API sent)
    String.raw`"name"\s*:\s*"APIError"\s*,\s*"data"\s*:\s*\{\s*"message"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"statusCode"\s*:\s*401\b`,
    // opencode (AI SDK) and Copilot CLI
    String.raw`ProviderAuthError\b`,
    "No authentication information found",
    // Copilot CLI 1.0: its bring-your-own-key provider refused the key / GitHub refused the token
    String.raw`Authentication failed with provider at \S+ \(HTTP 40[13]\)`,
    "Your GitHub token may be invalid, expired, or lacking the required permissions",
  ]
    .map((shape) => `(?:${shape})`)
    .join("|")})[^\n]*`,
);

interface Rule {
  code: FailureCause["code"];
  pattern: RegExp;
  what: string;
  fix: string;
  configuration: boolean;
}

/** One line of output that matches any of `shapes` (each a regex source, matched case-sensitively). */
function anyLine(shapes: readonly string[]): RegExp {
  return new RegExp(`[^\n]*(?:${shapes.map((shape) => `(?:${shape})`).join("|")})[^\n]*`);
}

/** `overseer start` resumes the paused project and the task the incident holds (one step). */
const THEN_START = "then `overseer start --project PROJECT` resumes the project and this task";

/**
 * The shapes, as the pinned CLIs print them against a model API answering with the vendors'
 * documented errors (recorded in test/fixtures/cli-failures, see failure-samples.e2e.ts in
 * test/agents). Claude Code's stream-json retries (`api_retry`) carry the HTTP status, its
 * final `result` carries `api_error_status`; Codex prints `unexpected status N` or `last status:
 * N`; opencode's `APIError` carries `statusCode`; Gemini and Copilot print the API's message.
 */
const MODEL_NOT_FOUND_SHAPES = [
  // OpenAI (codex, opencode): "The model `x` does not exist or you do not have access to it."
  "The model `[^`]*` does not exist or you do not have access to it",
  String.raw`"code"\s*:\s*"model_not_found"`,
  // Copilot BYOK: "Model 'x' not found on provider at URL (HTTP 404)."
  String.raw`Model '[^']*' not found on provider at \S+`,
  // Gemini: "ModelNotFoundError: models/x is not found for API version v1beta …"
  String.raw`ModelNotFoundError\b`,
  String.raw`models/\S+ is not found for API version`,
  // Claude Code: result "There's an issue with the selected model (x)…", api_error_status 404
  "There's an issue with the selected model",
  String.raw`"api_error_status"\s*:\s*404\b`,
  String.raw`"type"\s*:\s*"not_found_error"`,
  String.raw`"name"\s*:\s*"APIError"\s*,\s*"data"\s*:\s*\{\s*"message"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"statusCode"\s*:\s*404\b`,
];

const QUOTA_SHAPES = [
  // OpenAI / Gemini: "You exceeded your current quota, please check your plan and billing details."
  "You exceeded your current quota",
  String.raw`"code"\s*:\s*"insufficient_quota"`,
  // Anthropic: "Your credit balance is too low to access the Anthropic API."; Claude Code's
  // result: "Credit balance is too low"
  "[Cc]redit balance is too low",
  // Codex: "Quota exceeded. Check your plan and billing details."
  String.raw`Quota exceeded\. Check your plan and billing details`,
];

const RATE_LIMIT_SHAPES = [
  // Codex: "exceeded retry limit, last status: 429 Too Many Requests"
  "(?:unexpected status|last status:) 429 Too Many Requests",
  // Claude Code: its retries ({"subtype":"api_retry",…,"error_status":429,"error":"rate_limit"})
  // and the result of a run whose retries ran out
  String.raw`"subtype"\s*:\s*"api_retry"[^\n]*"error_status"\s*:\s*429\b`,
  String.raw`"api_error_status"\s*:\s*429\b`,
  // Copilot: "Failed to get response from the AI model; retried 5 times (…) Last error: 429 …"
  String.raw`Last error: 429\b`,
  // Gemini: "Attempt 3 failed with status 429."
  String.raw`failed with status 429\b`,
  String.raw`"name"\s*:\s*"APIError"\s*,\s*"data"\s*:\s*\{\s*"message"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"statusCode"\s*:\s*429\b`,
  String.raw`"type"\s*:\s*"rate_limit_error"`,
  String.raw`"code"\s*:\s*"rate_limit_exceeded"`,
  // OpenAI's rate-limit message, as opencode logs each retry of it (`error.error="AI_APICallError:
  // Rate limit reached for M on requests per min (RPM): …"`)
  String.raw`Rate limit reached for \S+ on `,
];

/** The egress proxy reached no upstream for an allowed host: the model gateway is down or elsewhere. */
const UNREACHABLE_SHAPES = [
  String.raw`overseer egress proxy: (?:connect )?(?:ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ECONNRESET)\b`,
  "overseer egress proxy: upstream (?:connect )?timeout",
  // Copilot BYOK: "Could not connect to local model provider at URL."; its retries ending on
  // the proxy's 502: "… Last error: 502 Bad Gateway"
  String.raw`Could not connect to (?:local )?model provider at \S+`,
  String.raw`Last error: 50[234]\b`,
  // Claude Code retrying on the proxy's 502 (or a gateway's 503/504), or its final result
  String.raw`"subtype"\s*:\s*"api_retry"[^\n]*"error_status"\s*:\s*50[234]\b`,
  String.raw`"api_error_status"\s*:\s*50[234]\b`,
  // Codex and Gemini without an answer at all (no proxy between them and the host)
  String.raw`Reconnecting\.\.\. waiting for network \(Connection failed`,
  String.raw`Retrying with backoff\.\.\. Error: exception TypeError: fetch failed`,
  // opencode's retries: the proxy's (or a gateway's) 502/503/504 (`error.error="AI_APICallError:
  // Bad Gateway"`, `AI_RetryError: … Last error: Bad Gateway`), or no answer at all
  String.raw`message="stream error" [^\n]*error\.error="AI_(?:APICall|Retry)Error: (?:[^"]*Last error: )?(?:Bad Gateway|Service Unavailable|Gateway Timeout)"`,
  "Cannot connect to API: Unable to connect",
];

/** The harness itself cannot be started inside the sandbox (its path is not bound or absent). */
const CLI_MISSING_SHAPES = [
  // bwrap: "bwrap: execvp /opt/x/codex: No such file or directory"
  String.raw`bwrap: execvp \S+: (?:No such file or directory|Permission denied)`,
  // The presets' `sh -c 'exec "$0" …'` wrappers (dash and bash)
  String.raw`exec: \S+: (?:not found|cannot execute: No such file or directory)`,
];

const RULES: readonly Rule[] = [
  {
    code: "nested_sandbox",
    pattern:
      /bwrap: (?:Creating new namespace failed|No permissions to create new namespace)[^\n]*|nesting depth or \/proc\/sys\/user\/max_\w+_namespaces exceeded[^\n]*|sandbox-exec: [^\n]*|Landlock[^\n]*not supported[^\n]*/i,
    what: "nested sandbox refused",
    fix: `the agent CLI tried to start its own sandbox inside Overseer's; turn the CLI's sandbox off (codex --dangerously-bypass-approvals-and-sandbox, claude --dangerously-skip-permissions with IS_SANDBOX=1) or use \`overseer init --agent NAME --update\`; ${THEN_START}`,
    configuration: true,
  },
  {
    code: "agent_command_missing",
    pattern: /overseer-agent: (?:command )?not found[^\n]*|overseer-agent: No such file or directory[^\n]*/,
    what: "overseer-agent was not found by the agent's shell",
    fix: `keep the run's PATH in the agent's shell (a wrapper that resets PATH, or \`env -i\`, loses it) or call overseer-agent by the absolute path in OVERSEER_AGENT_BIN; ${THEN_START}`,
    configuration: true,
  },
  {
    code: "cli_missing",
    pattern: anyLine(CLI_MISSING_SHAPES),
    what: "the agent CLI cannot be started inside the sandbox",
    fix: `install the CLI under /usr (or /opt bound read-only) on every worker, or add the directory holding it and its runtime to sandbox.read_only_paths in the runner config (\`overseer init --project PROJECT --update --config runner.json\`); \`overseer doctor\` checks each role's command inside the sandbox; ${THEN_START}`,
    configuration: true,
  },
  {
    code: "auth_refused",
    pattern: AUTH_FAILURE_SHAPES,
    what: "the model API refused the credentials",
    fix: `set a valid key in the project's secrets (overseer init --project PROJECT --update --agent NAME with the key in the environment and the --model, --base-url, --agent-bin and --config you gave at first: --update writes the preset anew) and check the base URL; ${THEN_START}`,
    configuration: true,
  },
  {
    code: "model_not_found",
    pattern: anyLine(MODEL_NOT_FOUND_SHAPES),
    what: "the model API does not know the model",
    fix: `name a model the API serves (overseer init --project PROJECT --update --agent NAME --model MODEL with the key in the environment and the --base-url, --agent-bin and --config you gave at first) or check the base URL; ${THEN_START}`,
    configuration: true,
  },
  {
    code: "quota_exhausted",
    pattern: anyLine(QUOTA_SHAPES),
    what: "the model API account is out of quota or credit",
    fix: `add credit or raise the quota of the account the key belongs to (or use another key); ${THEN_START}`,
    configuration: true,
  },
  {
    code: "rate_limited",
    pattern: anyLine(RATE_LIMIT_SHAPES),
    what: "the model API rate-limited every retry of the CLI",
    fix: `wait for the limit to reset, raise it with the provider, or lower the project's concurrency; ${THEN_START}`,
    configuration: true,
  },
  {
    code: "gateway_unreachable",
    pattern: anyLine(UNREACHABLE_SHAPES),
    what: "the model gateway could not be reached (the host is allowed; nothing answered)",
    fix: `start the model gateway or correct the base URL (its host and port) in the runner config; ${THEN_START}`,
    configuration: true,
  },
  {
    code: "egress_refused",
    pattern: /overseer egress proxy: [^\n]*/,
    what: "the egress proxy refused a connection",
    fix: "add the host (host:port for another port) to network_allow_hosts; an internal address also needs OVERSEER_EGRESS_ALLOW_PRIVATE on the worker",
    configuration: false,
  },
];

/** The last `count` non-empty lines of `output`. */
export function lastLines(output: string, count = FAILURE_TAIL_LINES): string {
  return output
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "")
    .slice(-count)
    .join("\n");
}

/** The first known cause in the run's last lines, or null. */
export function classifyFailure(output: string): FailureCause | null {
  const tail = lastLines(output, FAILURE_TAIL_LINES * 3);
  for (const rule of RULES) {
    const match = rule.pattern.exec(tail);
    if (match) {
      const evidence = readableLine(match[0].trim()).slice(0, 300);
      return {
        code: rule.code,
        message: `${rule.what}: ${evidence}`,
        fix: rule.fix,
        configuration: rule.configuration,
      };
    }
  }
  return null;
}

/**
 * A line as the operator reads it: a CLI's JSON event becomes its message (`result`, an error's
 * `message`, opencode's `data.message`, Claude's retry status), plain text stays as it is.
 */
export function readableLine(line: string): string {
  if (!line.startsWith("{")) return logLineMessage(line) ?? line;
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return line;
  }
  const text = eventMessage(event);
  return text === null ? line : text;
}

/**
 * The error (or message) of a CLI's `key=value` log line, opencode's `--print-logs` shape:
 * `timestamp=… level=ERROR … message="stream error" … error.error="AI_APICallError: Bad Gateway"`
 * reads "stream error: Bad Gateway". Null for any other line.
 */
function logLineMessage(line: string): string | null {
  if (!/^timestamp=\S+ level=[A-Z]+ /.test(line)) return null;
  const field = (key: string) =>
    new RegExp(`(?:^| )${key.replace(".", "\\.")}=(?:"((?:[^"\\\\]|\\\\.)*)"|(\\S+))`)
      .exec(line)
      ?.slice(1)
      .find((v) => v !== undefined) ?? null;
  const message = field("message");
  const error = field("error.error") ?? field("error");
  if (error === null) return message;
  const text = error.replace(/^AI_\w+Error: /, "");
  return message === null ? text : `${message}: ${text}`;
}

function eventMessage(event: unknown): string | null {
  if (typeof event !== "object" || event === null) return null;
  const e = event as Record<string, unknown>;
  if (e.subtype === "api_retry") {
    const status =
      e.error_status === null || e.error_status === undefined ? "no status" : `HTTP ${e.error_status}`;
    return `API call failed (${status}, ${String(e.error ?? "unknown")}); retry ${String(e.attempt ?? "?")} of ${String(e.max_retries ?? "?")}`;
  }
  const said = assistantText(e);
  if (said !== null) return said;
  if (typeof e.result === "string" && e.result !== "") {
    return typeof e.api_error_status === "number" ? `${e.result} (HTTP ${e.api_error_status})` : e.result;
  }
  const error = e.error;
  if (typeof error === "object" && error !== null) {
    const inner = error as Record<string, unknown>;
    const data = inner.data as Record<string, unknown> | undefined;
    if (typeof data?.message === "string")
      return typeof data.statusCode === "number" ? `${data.message} (HTTP ${data.statusCode})` : data.message;
    if (typeof inner.message === "string") return inner.message;
  }
  if (typeof e.message === "string") return e.message;
  return null;
}

/** The text of a Claude Code `assistant` event (`message.content[].text`), or null. */
function assistantText(e: Record<string, unknown>): string | null {
  if (e.type !== "assistant") return null;
  const content = (e.message as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return null;
  const text = content
    .map((c) => (typeof (c as { text?: unknown }).text === "string" ? (c as { text: string }).text : ""))
    .join("")
    .trim();
  return text === "" ? null : text;
}

/** Causes a CLI's own retries cannot fix: seeing one while it retries ends the run at once. */
const FATAL_WHILE_RETRYING: ReadonlySet<FailureCause["code"]> = new Set([
  "auth_refused",
  "model_not_found",
  "quota_exhausted",
]);

/**
 * A CLI's own report of a model call that failed and that it is about to retry, never what the
 * agent's commands print (those arrive inside the CLI's JSON events): Claude Code 2.1's
 * `{"type":"system","subtype":"api_retry",…,"error_status":401,"error":"authentication_failed"}`,
 * and the `stream error` line opencode 1.18 logs on stderr with the preset's `--print-logs
 * --log-level WARN` (`timestamp=… level=ERROR … message="stream error" … error.error="AI_APICallError: …"`).
 */
const CLI_RETRY_LINE =
  /^\{[^\n]*"subtype"\s*:\s*"api_retry"|^timestamp=\S+ level=ERROR [^\n]*message="stream error"/;

/**
 * Watches one run's output, line by line, for its CLI retrying what retrying will not fix, and
 * answers true on the line where the run should end instead of at its time limit. A refused
 * key, an unknown model or an exhausted quota end it at the first such retry (Claude Code
 * retries a refused key ten times over minutes; opencode retries an exhausted quota forever);
 * a rate limit or an unreachable gateway after `retryLimit` retries of that cause in a row
 * (opencode retries those forever with a backoff growing to 30 s, and prints nothing else).
 * Any other event of the CLI (it got an answer) starts the count again.
 */
export function cliRetryWatch(retryLimit: number): (line: string) => boolean {
  let streak = { code: "", count: 0 };
  return (line) => {
    if (!CLI_RETRY_LINE.test(line)) {
      if (line.startsWith("{")) streak = { code: "", count: 0 };
      return false;
    }
    const cause = classifyFailure(line);
    if (cause === null) return false;
    if (FATAL_WHILE_RETRYING.has(cause.code)) return true;
    streak = { code: cause.code, count: streak.code === cause.code ? streak.count + 1 : 1 };
    return streak.count >= retryLimit;
  };
}

/** A cause's fix with the project named (the fixes say PROJECT where its id goes). */
export function fixFor(cause: FailureCause, projectId: string): string {
  return cause.fix.replaceAll("PROJECT", projectId);
}
