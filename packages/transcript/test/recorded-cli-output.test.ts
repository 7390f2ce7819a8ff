import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseTranscript, type TranscriptEntry, TranscriptEntrySchema } from "../src/index.ts";

/**
 * Output recorded from the pinned real CLIs by test/agents/transcript-samples.e2e.ts
 * (OVERSEER_RECORD_FIXTURES=1): the scripted model writes hello.txt with the CLI's own file
 * tool, runs a shell command that fails with exit 127, then answers "Done.".
 */
const FIXTURES = path.join(import.meta.dirname, "fixtures");

function read(name: string): { entries: TranscriptEntry[]; text: string } {
  const text = readFileSync(path.join(FIXTURES, name), "utf8");
  const root = /(\/tmp\/[^"\s]+?\/checkout)\b/.exec(text)?.[1] ?? null;
  const entries = parseTranscript(text, name.split("-")[0], { root });
  for (const entry of entries) expect(TranscriptEntrySchema.parse(entry)).toEqual(entry);
  return { entries, text };
}

const summary = (entries: readonly TranscriptEntry[]) =>
  entries.map((e) => {
    switch (e.kind) {
      case "tool_result":
        return `result ${e.exitCode}`;
      case "file_edit":
        return `edit ${e.change} ${e.path}`;
      case "tool_call":
        return `call ${e.tool}`;
      case "message":
        return `${e.role}${e.role === "assistant" ? `: ${e.text}` : ""}`;
      default:
        return e.kind;
    }
  });

describe("recorded output of the pinned CLIs", () => {
  it("codex 0.171.0: the patch's edit, the command with exit 127, the notice summarised", () => {
    const { entries } = read("codex-0.171.0.jsonl");
    expect(summary(entries)).toEqual([
      "raw", // its warning about PATH aliases under /tmp, on stderr
      "system",
      "edit add hello.txt",
      "call shell",
      "result 127",
      "assistant: Done.",
      "usage",
    ]);
    expect(entries[1]).toMatchObject({
      text: expect.stringMatching(/^Codex has no metadata for model mock-codex/),
    });
    expect(entries[4]).toMatchObject({
      output: expect.stringContaining("overseer-agent: command not found"),
    });
  });

  it("claude 2.1.332: Write then Bash, each result linked to its call", () => {
    const { entries, text } = read("claude-2.1.332.jsonl");
    expect(summary(entries)).toEqual([
      "system",
      "raw", // its notice about the unknown model, on stderr
      "call Write",
      "usage",
      "result null",
      "edit add hello.txt",
      "call Bash",
      "usage",
      "result 127",
      "assistant: Done.",
      "usage",
      "usage",
    ]);
    const init = text.split("\n").find((line) => line.includes('"subtype":"init"')) ?? "";
    expect((entries[0] as { text: string }).text.length * 10).toBeLessThan(init.length);
    const calls = entries.filter((e) => e.kind === "tool_call").map((e) => e.callId);
    const results = entries.filter((e) => e.kind === "tool_result").map((e) => e.callId);
    expect(results).toEqual(calls);
  });

  it("gemini 0.61.0: write_file and the shell command (its stream-json has no exit code)", () => {
    const { entries } = read("gemini-0.61.0.jsonl");
    expect(summary(entries)).toEqual([
      "raw",
      "raw",
      "raw",
      "raw",
      "system",
      "user",
      "call write_file",
      "result null",
      "edit null hello.txt",
      "call run_shell_command",
      "result null",
      "assistant: Done.",
      "usage",
    ]);
    expect(entries.at(-1)).toMatchObject({ model: "mock-gemini", inputTokens: 3000 });
  });

  it("opencode 1.18.33: write then bash with exit 127, usage and cost per step", () => {
    const { entries } = read("opencode-1.18.33.jsonl");
    expect(summary(entries)).toEqual([
      "call write",
      "result null",
      "edit add hello.txt",
      "usage",
      "call bash",
      "result 127",
      "usage",
      "assistant: Done.",
      "usage",
    ]);
  });

  it("copilot 1.0.102 session events: the system prompt summarised, create then bash with exit 127", () => {
    const { entries } = read("copilot-1.0.102.jsonl");
    expect(summary(entries)).toEqual([
      "system",
      "user",
      "system",
      "usage",
      "call create",
      "result null",
      "edit add hello.txt",
      "usage",
      "call bash",
      "result 127",
      "usage",
      "assistant: Done.",
    ]);
    expect((entries[2] as { text: string }).text).toMatch(/^Copilot's system prompt \(\d+ characters\)\.$/);
  });
});
