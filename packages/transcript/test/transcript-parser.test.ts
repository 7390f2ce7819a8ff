import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  createTranscriptFeed,
  createTranscriptParser,
  parseTranscript,
  type TranscriptEntry,
  TranscriptEntrySchema,
} from "../src/index.ts";

const HARNESS_FIXTURES = path.join(import.meta.dirname, "../../harness/test/fixtures/agent-output");
const fixture = (name: string) => readFileSync(path.join(HARNESS_FIXTURES, name), "utf8");

const kinds = (entries: readonly TranscriptEntry[]) => entries.map((entry) => entry.kind);
const valid = (entries: readonly TranscriptEntry[]) => {
  for (const entry of entries) expect(TranscriptEntrySchema.parse(entry)).toEqual(entry);
  expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i));
  return entries;
};

describe("codex exec --json", () => {
  it("reads the recorded 0.171.0 run: notice, command with exit code and output, message, usage", () => {
    const entries = valid(parseTranscript(fixture("codex-0.171.0-exec.jsonl"), "codex"));
    expect(kinds(entries)).toEqual(["message", "tool_call", "tool_result", "message", "usage"]);
    expect(entries[0]).toMatchObject({
      role: "system",
      text: expect.stringContaining("no metadata for model mock-codex"),
    });
    expect(entries[1]).toMatchObject({
      tool: "shell",
      callId: "item_1",
      command: expect.stringContaining("hello.txt"),
    });
    expect(entries[2]).toMatchObject({
      callId: "item_1",
      exitCode: 127,
      output: "/bin/bash: line 6: overseer-agent: command not found\n",
      truncated: false,
    });
    expect(entries[3]).toMatchObject({ role: "assistant", text: "Done." });
    expect(entries[4]).toMatchObject({ inputTokens: 2000, outputTokens: 100, cachedInputTokens: 400 });
  });

  it("turns file changes into edits and failed turns into errors", () => {
    const lines = [
      '{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"a.txt","kind":"add"},{"path":"b.txt","kind":"update"},{"path":"c.txt","kind":"delete"}],"status":"completed"}}',
      '{"type":"turn.failed","error":{"message":"stream disconnected"}}',
      '{"type":"item.completed","item":{"id":"item_4","type":"error","message":"quota exceeded"}}',
    ].join("\n");
    const entries = valid(parseTranscript(lines, "codex"));
    expect(entries.map((e) => (e.kind === "file_edit" ? `${e.change} ${e.path}` : e.kind))).toEqual([
      "add a.txt",
      "update b.txt",
      "delete c.txt",
      "error",
      "error",
    ]);
  });
});

describe("claude stream-json", () => {
  it("summarises the init event and reads the call, its result, the message and usage", () => {
    const output = fixture("claude-2.1.332-stream.jsonl");
    const init = output.split("\n")[0] as string;
    const entries = valid(parseTranscript(output, "claude"));
    expect(init.length).toBeGreaterThan(2000);
    expect(entries[0]).toMatchObject({ kind: "message", role: "system" });
    expect((entries[0] as { text: string }).text.length).toBeLessThan(200);
    expect(kinds(entries)).toEqual([
      "message",
      "tool_call",
      "usage",
      "tool_result",
      "message",
      "usage",
      "usage",
    ]);
    expect(entries[1]).toMatchObject({ tool: "Bash", command: expect.stringContaining("overseer-agent") });
    expect(entries[3]).toMatchObject({ exitCode: 0, output: "ok" });
    const usage = entries.filter((e) => e.kind === "usage");
    // Summed, the per-message counts and the result's remainder give the run's total and cost.
    expect(usage.reduce((sum, e) => sum + e.outputTokens, 0)).toBe(100);
    expect(usage.at(-1)?.costUsd).toBeCloseTo(0.00848, 6);
  });

  it("records an edit once the Write call succeeded, and an error result", () => {
    const entries = valid(parseTranscript(fixture("claude-stream.jsonl"), "claude"));
    expect(entries.find((e) => e.kind === "file_edit")).toMatchObject({ path: "/work/checkout/hello.txt" });
    const failed = valid(
      parseTranscript(
        '{"type":"result","subtype":"error_max_turns","is_error":true,"result":"Too many turns"}',
        "claude",
      ),
    );
    expect(failed[0]).toMatchObject({ kind: "error", message: "Too many turns" });
  });
});

describe("gemini stream-json", () => {
  it("joins the streamed reply and pairs tool calls with their results and edits", () => {
    const entries = valid(parseTranscript(fixture("gemini-stream.jsonl"), "gemini"));
    expect(kinds(entries)).toEqual([
      "message",
      "message",
      "tool_call",
      "tool_result",
      "file_edit",
      "tool_call",
      "tool_result",
      "message",
      "usage",
    ]);
    expect(entries[4]).toMatchObject({ path: "hello.txt", change: "add" });
    expect(entries[6]).toMatchObject({ exitCode: null, output: "submitted" });
    expect(entries[8]).toMatchObject({ model: "gemini-2.5-pro", inputTokens: 24939, outputTokens: 174 });
  });

  it("holds a streamed message until it ends, then emits it once", () => {
    const parser = createTranscriptParser("gemini");
    expect(parser.push('{"type":"message","role":"assistant","content":"Hel","delta":true}')).toEqual([]);
    expect(parser.push('{"type":"message","role":"assistant","content":"lo","delta":true}')).toEqual([]);
    expect(parser.finish()).toMatchObject([{ kind: "message", role: "assistant", text: "Hello" }]);
  });
});

describe("opencode --format json", () => {
  it("reads tool parts with their exit status, text and per-step usage with cost", () => {
    const entries = valid(parseTranscript(fixture("opencode-run.jsonl"), "opencode"));
    expect(kinds(entries)).toEqual([
      "tool_call",
      "tool_result",
      "file_edit",
      "usage",
      "tool_call",
      "tool_result",
      "message",
      "usage",
    ]);
    expect(entries[3]).toMatchObject({
      inputTokens: 9800 + 4096 + 512,
      cachedInputTokens: 4096,
      costUsd: 0.0123,
    });
    const recorded = valid(parseTranscript(fixture("opencode-1.18.33-run.jsonl"), "opencode"));
    expect(recorded.find((e) => e.kind === "tool_result")).toMatchObject({ exitCode: 127 });
  });
});

describe("copilot session events", () => {
  it("reads messages, the shell call with its exit code and per-call usage", () => {
    const entries = valid(parseTranscript(fixture("copilot-events.jsonl"), "copilot"));
    expect(kinds(entries)).toEqual([
      "message",
      "message",
      "usage",
      "tool_call",
      "tool_result",
      "usage",
      "message",
    ]);
    expect(entries[4]).toMatchObject({ exitCode: 0 });
    expect(entries.at(-1)).toMatchObject({ role: "assistant", text: "Done." });
  });
});

describe("every parser", () => {
  it.each(["codex", "claude", "gemini", "opencode", "copilot"])(
    "%s keeps unknown and non-JSON lines as raw entries",
    (agent) => {
      const entries = valid(
        parseTranscript('{"type":"brand.new","x":1}\nplain text from stderr\n\n[1, 2]\n{not json\n', agent),
      );
      expect(entries.map((e) => (e.kind === "raw" ? e.text : e.kind))).toEqual([
        '{"type":"brand.new","x":1}',
        "plain text from stderr",
        "[1, 2]",
        "{not json",
      ]);
    },
  );

  it("keeps every line of an agent without a parser as raw", () => {
    const entries = valid(parseTranscript("one\ntwo\n", "my-own-cli"));
    expect(entries).toEqual([
      { seq: 0, at: null, kind: "raw", text: "one" },
      { seq: 1, at: null, kind: "raw", text: "two" },
    ]);
  });

  it("stamps entries without a time with the given clock", () => {
    const entries = parseTranscript("hello\n", null, { now: () => "2026-01-01T00:00:00.000Z" });
    expect(entries[0]?.at).toBe("2026-01-01T00:00:00.000Z");
  });

  it("bounds tool output (head and tail) and long lines", () => {
    const output = `${"a".repeat(5000)}${"b".repeat(5000)}`;
    const line = JSON.stringify({
      type: "item.completed",
      item: { id: "i", type: "command_execution", command: "x", aggregated_output: output, exit_code: 1 },
    });
    const entries = parseTranscript(`${line}\n${"z".repeat(50)}\n`, "codex", {
      maxToolOutputChars: 1000,
      maxTextChars: 10,
    });
    const result = entries.find((e) => e.kind === "tool_result");
    expect(result).toMatchObject({ truncated: true, exitCode: 1 });
    expect(result?.kind === "tool_result" && result.output.startsWith("a".repeat(250))).toBe(true);
    expect(result?.kind === "tool_result" && result.output.endsWith("b".repeat(750))).toBe(true);
    expect(entries.at(-1)).toMatchObject({ kind: "raw", text: `${"z".repeat(10)}… [40 more characters]` });
  });

  it("reads output fed in arbitrary chunks the same as whole", () => {
    const output = fixture("codex-0.171.0-exec.jsonl");
    const whole = parseTranscript(output, "codex");
    const feed = createTranscriptFeed("codex");
    const pieces: TranscriptEntry[] = [];
    for (let i = 0; i < output.length; i += 37) pieces.push(...feed.write(output.slice(i, i + 37)));
    pieces.push(...feed.end());
    expect(pieces).toEqual(whole);
  });
});

describe("claude api_retry", () => {
  it("is an error entry naming the failed call and the retry, not a raw JSON line", () => {
    const line = JSON.stringify({
      type: "system",
      subtype: "api_retry",
      attempt: 1,
      max_retries: 10,
      retry_delay_ms: 607,
      error_status: 401,
      error: "authentication_failed",
      session_id: "3351824c",
    });
    expect(parseTranscript(`${line}\n`, "claude")).toEqual([
      {
        seq: 0,
        at: null,
        kind: "error",
        message: "API call failed (HTTP 401, authentication_failed); retry 1 of 10",
      },
    ]);
  });
});
