import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { describeTranscript, parseTranscript, type TranscriptEntry } from "../src/index.ts";

/** The card text of a run, from the transcripts of the output recorded from the pinned CLIs. */
const FIXTURES = path.join(import.meta.dirname, "fixtures");
const recorded = (name: string) =>
  parseTranscript(readFileSync(path.join(FIXTURES, name), "utf8"), name.split("-")[0]);

describe("describeTranscript", () => {
  it.each([
    ["codex-0.171.0.jsonl", "The failing command (exit 127): /bin/bash -lc 'if ["],
    ["claude-2.1.332.jsonl", 'The failing command (exit 127): if [ "$OVERSEER_ACTION" = review ]; then'],
    ["opencode-1.18.33.jsonl", 'The failing command (exit 127): if [ "$OVERSEER_ACTION" = review ]; then'],
    ["copilot-1.0.102.jsonl", 'The failing command (exit 127): if [ "$OVERSEER_ACTION" = review ]; then'],
    // Gemini's stream-json has no exit code: its last command, with its output.
    ["gemini-0.61.0.jsonl", "Its last command: "],
  ])("%s: the last message, the failing command and its output tail, no JSON", (fixture, command) => {
    const text = describeTranscript(recorded(fixture));
    expect(text.startsWith("The model's last message: Done.\n")).toBe(true);
    expect(text).toContain(`\n${command}`);
    expect(text).toMatch(/\nIts output, last lines:\n( {2}.*\n)* {2}.*overseer-agent: command not found/);
    expect(text).not.toContain('{"type"');
    // Codex's notice about the model's metadata is noise, not the run's words.
    expect(text).not.toContain("Model metadata");
  });

  it("prefers the failing command to a later one that passed, bounds the output, names the CLI's error", () => {
    const entries: TranscriptEntry[] = [
      { seq: 0, at: null, kind: "tool_call", callId: "a", tool: "shell", command: "make test", args: null },
      {
        seq: 1,
        at: null,
        kind: "tool_result",
        callId: "a",
        exitCode: 2,
        output: `${Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n")}\n`,
        truncated: false,
      },
      { seq: 2, at: null, kind: "tool_call", callId: "b", tool: "shell", command: "ls", args: null },
      { seq: 3, at: null, kind: "tool_result", callId: "b", exitCode: 0, output: "x\n", truncated: false },
      { seq: 4, at: null, kind: "error", message: "stream disconnected" },
    ];
    expect(describeTranscript(entries)).toBe(
      [
        "The failing command (exit 2): make test",
        "Its output, last lines:",
        ...Array.from({ length: 8 }, (_, i) => `  line ${22 + i}`),
        "The CLI's last error: stream disconnected",
      ].join("\n"),
    );
  });

  it("a tool without a command shows its name and arguments; a result is paired with the call before it", () => {
    const entries: TranscriptEntry[] = [
      {
        seq: 0,
        at: null,
        kind: "tool_call",
        callId: null,
        tool: "write_file",
        command: null,
        args: { path: "a" },
      },
      { seq: 1, at: null, kind: "tool_result", callId: null, exitCode: null, output: "", truncated: false },
      { seq: 2, at: null, kind: "message", role: "assistant", text: "x".repeat(700) },
    ];
    const text = describeTranscript(entries);
    expect(text).toContain(`The model's last message: ${"x".repeat(599)}…`);
    expect(text).toContain('Its last command: write_file {"path":"a"}');
    expect(text).not.toContain("Its output");
  });

  it("without messages, commands or errors: the last raw lines, else that nothing was readable", () => {
    const raw = (seq: number, text: string): TranscriptEntry => ({ seq, at: null, kind: "raw", text });
    expect(describeTranscript([raw(0, "building"), raw(1, "sh: 1: make: not found")])).toBe(
      "Last lines of the run:\nbuilding\nsh: 1: make: not found",
    );
    expect(describeTranscript([raw(0, '{"type":"x","session_id":"s"}'), raw(1, "sh: make: not found")])).toBe(
      "Last lines of the run:\nsh: make: not found",
    );
    expect(describeTranscript([])).toBe("The run printed nothing readable.");
  });
});
