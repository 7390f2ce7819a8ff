import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { classifyFailure, cliRetryWatch, lastLines, readableLine } from "../src/failure-classifier.ts";

/**
 * Output of the pinned real CLIs (test/agents/agent-install.ts), recorded with their preset's
 * command against a model API answering as the vendors document their errors
 * (test/agents/mock-failing-model.ts): 401 (key refused), 429 (rate limit, quota), 404 (model
 * not found), and a closed port behind Overseer's egress proxy (gateway unreachable); and what
 * bwrap and the presets' `sh -c exec` wrappers print for a CLI the sandbox cannot see.
 */
const FIXTURES = new URL("./fixtures/cli-failures/", import.meta.url);
const recorded = (name: string) => readFileSync(new URL(name, FIXTURES), "utf8");

const EXPECTED_CODE: Record<string, string> = {
  auth: "auth_refused",
  model_not_found: "model_not_found",
  quota: "quota_exhausted",
  rate_limit: "rate_limited",
  unreachable: "gateway_unreachable",
};

describe("classifyFailure: recorded output of the pinned CLIs", () => {
  const files = readdirSync(FIXTURES).filter((f) => /^[a-z]+-\d[\d.]*-[a-z_]+\.txt$/.test(f));
  it("has a sample of every failure for every CLI", () => {
    expect(files).toHaveLength(5 * 5);
  });
  for (const file of files) {
    const failure = /-([a-z_]+)\.txt$/.exec(file)?.[1] as string;
    // Gemini's API answers a rate limit with its quota message (429 RESOURCE_EXHAUSTED).
    const expected =
      file.startsWith("gemini-") && failure === "rate_limit" ? "quota_exhausted" : EXPECTED_CODE[failure];
    it(`names ${file} as ${expected}, a configuration cause`, () => {
      const cause = classifyFailure(recorded(file));
      expect(cause).toMatchObject({ code: expected, configuration: true });
      // The operator reads the CLI's message, not a JSON event.
      expect(cause?.message).not.toMatch(/"type"\s*:/);
      expect(cause?.fix).toMatch(/overseer start --project/);
    });
  }

  it("reads Claude Code's first refused retry as a refused key", () => {
    const firstRetry = recorded("claude-2.1.332-auth.txt")
      .split("\n")
      .find((line) => line.includes('"subtype":"api_retry"')) as string;
    expect(classifyFailure(firstRetry)).toMatchObject({
      code: "auth_refused",
      message:
        "the model API refused the credentials: API call failed (HTTP 401, authentication_failed); retry 1 of 10",
    });
  });

  it("names an unreachable gateway behind the proxy, not a refusal by the proxy", () => {
    const cause = classifyFailure(recorded("codex-0.171.0-unreachable.txt"));
    expect(cause?.message).toContain("overseer egress proxy: connect ECONNREFUSED 127.0.0.1:");
    expect(cause?.fix).not.toContain("network_allow_hosts");
  });

  for (const file of ["bwrap-execvp.txt", "sh-exec-missing.txt"]) {
    it(`names ${file} as a CLI the sandbox cannot see`, () => {
      expect(classifyFailure(recorded(file))).toMatchObject({ code: "cli_missing", configuration: true });
    });
  }
});

/** The worker's default retry limit (WORKER_DEFAULTS.cliRetryLimit, OVERSEER_CLI_RETRY_LIMIT). */
const DEFAULT_LIMIT = 5;

/** The index of the line on which a fresh watch ends the run, or -1. */
function endingLine(output: string, limit = DEFAULT_LIMIT): number {
  const watch = cliRetryWatch(limit);
  return output.split("\n").findIndex((line) => watch(line));
}

describe("cliRetryWatch: the run ends on the CLI's retries, not at its time limit", () => {
  // opencode 1.18.33 retries a rate limit, an exhausted quota and an unreachable gateway with a
  // backoff growing to 30 s and prints no event meanwhile; with the preset's --print-logs each
  // retry is a `stream error` line on stderr.
  const streamErrors = (file: string) =>
    recorded(file)
      .split("\n")
      .map((line, index) => ({ line, index }))
      .filter(({ line }) => line.includes('message="stream error"'));

  for (const failure of ["auth", "model_not_found", "quota"]) {
    it(`ends opencode's ${failure} at its first retry`, () => {
      const output = recorded(`opencode-1.18.33-${failure}.txt`);
      expect(endingLine(output)).toBe(streamErrors(`opencode-1.18.33-${failure}.txt`)[0]?.index);
    });
  }

  for (const [failure, code] of [
    ["rate_limit", "rate_limited"],
    ["unreachable", "gateway_unreachable"],
  ] as const) {
    it(`ends opencode's ${failure} at the 5th retry in a row (the default), before the CLI gives up by itself`, () => {
      const file = `opencode-1.18.33-${failure}.txt`;
      const output = recorded(file);
      const retries = streamErrors(file);
      const ending = endingLine(output);
      expect(ending).toBe(retries[4]?.index);
      // What opencode printed itself (its final error event) came later: recorded without the watch.
      expect(output.split("\n").findIndex((line) => line.startsWith('{"type":"error"'))).toBeGreaterThan(
        ending,
      );
      expect(
        classifyFailure(
          output
            .split("\n")
            .slice(0, ending + 1)
            .join("\n"),
        )?.code,
      ).toBe(code);
      // OVERSEER_CLI_RETRY_LIMIT moves the bound.
      expect(endingLine(output, 2)).toBe(retries[1]?.index);
    });
  }

  it("ends Claude Code's refused key at its first api_retry, and keeps counting only retries in a row", () => {
    const claude = recorded("claude-2.1.332-auth.txt").split("\n");
    expect(endingLine(claude.join("\n"))).toBe(claude.findIndex((l) => l.includes('"subtype":"api_retry"')));
    const retry = recorded("opencode-1.18.33-unreachable.txt")
      .split("\n")
      .find((line) => line.includes("AI_APICallError: Bad Gateway")) as string;
    const answered = '{"type":"step_start","part":{"type":"step-start"}}';
    // An answer between two retries (the gateway came back) starts the count again.
    expect(endingLine([retry, retry, answered, retry, retry].join("\n"), 3)).toBe(-1);
    expect(endingLine([retry, retry, answered, retry, retry, retry].join("\n"), 3)).toBe(5);
    // What the agent's own commands print never counts, even an identical text.
    expect(endingLine(`  ${retry}\n  ${retry}`, 1)).toBe(-1);
  });
});

describe("readableLine", () => {
  it("reads opencode's log line as its message and error", () => {
    const line = recorded("opencode-1.18.33-unreachable.txt")
      .split("\n")
      .find((l) => l.includes("AI_APICallError: Bad Gateway")) as string;
    expect(readableLine(line)).toBe("stream error: Bad Gateway");
  });

  it("reads the message of a CLI's JSON event and leaves text alone", () => {
    expect(readableLine('{"type":"turn.failed","error":{"message":"Quota exceeded."}}')).toBe(
      "Quota exceeded.",
    );
    expect(readableLine('{"type":"result","result":"Invalid API key","api_error_status":401}')).toBe(
      "Invalid API key (HTTP 401)",
    );
    expect(readableLine("plain text")).toBe("plain text");
    expect(readableLine("{not json")).toBe("{not json");
  });
});

describe("classifyFailure", () => {
  it("names a nested sandbox as a configuration cause", () => {
    const cause = classifyFailure(
      "working\nbwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)\n",
    );
    expect(cause).toMatchObject({ code: "nested_sandbox", configuration: true });
    expect(cause?.message).toMatch(/^nested sandbox refused: bwrap: Creating new namespace failed/);
  });

  it("names a missing overseer-agent and refused credentials", () => {
    expect(classifyFailure("/bin/sh: 6: overseer-agent: not found")?.code).toBe("agent_command_missing");
    expect(
      classifyFailure('{"type":"error","message":"unexpected status 401 Unauthorized: bad key"}')?.code,
    ).toBe("auth_refused");
  });

  it("names an egress refusal without stopping the project", () => {
    expect(
      classifyFailure("overseer egress proxy: host x.test is not in the project's network.allowHosts"),
    ).toMatchObject({
      code: "egress_refused",
      configuration: false,
    });
  });

  it("knows nothing about ordinary output and keeps the last lines", () => {
    expect(classifyFailure("compiling\nall good\n")).toBeNull();
    expect(lastLines("a\n\nb\nc\n", 2)).toBe("b\nc");
  });
});

describe("classifyFailure: credentials refused", () => {
  // What the CLIs print when the model API refuses the key (shapes of their documented errors).
  const refusals: Record<string, string> = {
    "codex --json":
      '{"type":"error","message":"unexpected status 401 Unauthorized: {\\"error\\":{\\"code\\":\\"invalid_api_key\\"}}"}',
    "codex retry limit": "ERROR: exceeded retry limit, last status: 401 Unauthorized, request id: req_1",
    "claude stream-json result":
      '{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login"}',
    "claude API error":
      'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    "openai body":
      '{"error":{"message":"Incorrect API key provided: sk-****1234.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}',
    "gemini body":
      '[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}]',
    "gemini stream-json result":
      '{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: {\\"error\\":{\\"code\\":400,\\"message\\":\\"API key not valid. Please pass a valid API key.\\"}}]"}}',
    "gemini without its key":
      "When using Gemini API, you must specify the GEMINI_API_KEY environment variable.",
    opencode: "Error: ProviderAuthError: the provider openai refused the credentials",
    // opencode 1.18.33 `run --format json`, verbatim, when a server answers 401 with a bare body
    "opencode --format json error":
      '{"type":"error","timestamp":1796117525274,"sessionID":"ses_dcf0dbefeffezn7rOmvQqz1dAb","error":{"name":"APIError","data":{"message":"Unauthorized: {\\"error\\":{\\"message\\":\\"Unauthorized\\"}}","statusCode":401,"isRetryable":false,"responseHeaders":{"connection":"keep-alive","content-type":"application/json","date":"Tue, 01 Dec 2026 09:32:04 GMT","keep-alive":"timeout=5","transfer-encoding":"chunked"},"responseBody":"{\\"error\\":{\\"message\\":\\"Unauthorized\\"}}","metadata":{"url":"http://127.0.0.1:18778/v1/chat/completions"}}}}',
    copilot: "Error: No authentication information found.",
    // @github/copilot 1.0.102, recorded: a gateway answering 401, then GitHub refusing the token.
    "copilot provider":
      "Authentication failed with provider at https://llm.corp.example/v1 (HTTP 401).\n  Check your COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_API_KEY_COMMAND, or COPILOT_PROVIDER_BEARER_TOKEN.",
    "copilot GitHub token": "Your GitHub token may be invalid, expired, or lacking the required permissions.",
  };
  for (const [name, line] of Object.entries(refusals)) {
    it(`names ${name} as auth refused`, () => {
      const cause = classifyFailure(`working on it\n${line}\n`);
      expect(cause).toMatchObject({ code: "auth_refused", configuration: true });
      expect(cause?.message).toContain(readableLine(line.split("\n")[0] as string).slice(0, 30));
    });
  }

  // Ordinary output of an agent that happens to contain 401 or auth words.
  const ordinary: Record<string, string> = {
    "a line number": "src/server.ts:401:12 - error TS2345: Argument of type 'string' is not assignable",
    "an HTTP status in a test": "  ✓ returns 401 Unauthorized without a token (12 ms)",
    "a JSON status in a test": 'expected {"status":401,"body":"Unauthorized"} to deep equal {"status":200}',
    "a test named after keys": "  ✗ rejects an invalid api key with 401",
    "a count": "Processed 401 files, 0 errors",
    "curl output": "HTTP/1.1 401 Unauthorized",
    "a setup note": "You must specify the GEMINI_API_KEY environment variable to run the e2e tests",
  };
  it("takes an opencode error of another status for that cause, not a refusal", () => {
    expect(
      classifyFailure(
        '{"type":"error","error":{"name":"APIError","data":{"message":"Rate limited","statusCode":429,"isRetryable":true}}}',
      )?.code,
    ).toBe("rate_limited");
  });
  for (const [name, line] of Object.entries(ordinary)) {
    it(`does not take ${name} for a refusal`, () => {
      expect(classifyFailure(`running tests\n${line}\ndone\n`)).toBeNull();
    });
  }
});
