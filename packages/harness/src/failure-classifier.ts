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
  code: "nested_sandbox" | "agent_command_missing" | "auth_refused" | "egress_refused" | "cli_missing";
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
    "Invalid API key · Please run /login",
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

const RULES: readonly Rule[] = [
  {
    code: "nested_sandbox",
    pattern:
      /bwrap: (?:Creating new namespace failed|No permissions to create new namespace)[^\n]*|nesting depth or \/proc\/sys\/user\/max_\w+_namespaces exceeded[^\n]*|sandbox-exec: [^\n]*|Landlock[^\n]*not supported[^\n]*/i,
    what: "nested sandbox refused",
    fix: "the agent CLI tried to start its own sandbox inside Overseer's; turn the CLI's sandbox off (codex --dangerously-bypass-approvals-and-sandbox, claude --dangerously-skip-permissions with IS_SANDBOX=1) or use `overseer init --agent NAME`",
    configuration: true,
  },
  {
    code: "agent_command_missing",
    pattern: /overseer-agent: (?:command )?not found[^\n]*|overseer-agent: No such file or directory[^\n]*/,
    what: "overseer-agent was not found by the agent's shell",
    fix: "keep the run's PATH in the agent's shell (a wrapper that resets PATH, or `env -i`, loses it) or call overseer-agent by the absolute path in OVERSEER_AGENT_BIN",
    configuration: true,
  },
  {
    code: "auth_refused",
    pattern: AUTH_FAILURE_SHAPES,
    what: "the model API refused the credentials",
    fix: "set a valid key in the project's secrets (overseer init --agent NAME --update with the key in the environment) and check the base URL",
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
      const evidence = match[0].trim().slice(0, 300);
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
