import { describe, expect, it } from "vitest";
import { renderTranscript, type TranscriptEntry } from "../src/index.ts";

const at = "2026-12-01T10:00:01.000Z";
const entries: TranscriptEntry[] = [
  { seq: 0, at, kind: "message", role: "assistant", text: "Creating the file." },
  { seq: 1, at, kind: "tool_call", callId: "c1", tool: "shell", command: "printf hi > a.txt", args: null },
  { seq: 2, at, kind: "tool_result", callId: "c1", exitCode: 2, output: "boom\n", truncated: true },
  { seq: 3, at, kind: "file_edit", path: "a.txt", change: "add" },
  {
    seq: 4,
    at: null,
    kind: "usage",
    inputTokens: 2000,
    outputTokens: 100,
    cachedInputTokens: 400,
    model: "m",
    costUsd: 0.01,
  },
  {
    seq: 5,
    at,
    kind: "tool_call",
    callId: null,
    tool: "write_file",
    command: null,
    args: { file_path: "b" },
  },
  { seq: 6, at, kind: "error", message: "quota" },
  { seq: 7, at, kind: "raw", text: "plain" },
];

describe("renderTranscript", () => {
  it("prints plain text when colour is off", () => {
    expect(renderTranscript(entries, { color: false })).toBe(
      [
        "10:00:01 assistant: Creating the file.",
        "10:00:01 $ printf hi > a.txt",
        "         ↳ exit 2 (output truncated)",
        "           boom",
        "10:00:01 ✎ add a.txt",
        "         tokens 2,000 in (400 cached) · 100 out · m · $0.0100",
        '10:00:01 → write_file {"file_path":"b"}',
        "10:00:01 error: quota",
        "10:00:01 plain",
        "",
      ].join("\n"),
    );
  });

  it("colours a terminal's output and elides long tool outputs", () => {
    const long: TranscriptEntry = {
      seq: 0,
      at,
      kind: "tool_result",
      callId: null,
      exitCode: 0,
      output: Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n"),
      truncated: false,
    };
    const text = renderTranscript([long], { color: true, maxOutputLines: 4 });
    expect(text).toContain("\u001b[32m↳ exit 0\u001b[0m");
    expect(text).toContain("line 0");
    expect(text).toContain("[… 46 lines …]");
    expect(text).toContain("line 49");
    expect(text).not.toContain("line 25");
  });

  it("heads each run's entries with the run id", () => {
    const text = renderTranscript(
      [
        { seq: 0, at, runId: "R1", kind: "raw", text: "a" },
        { seq: 0, at, runId: "R2", kind: "raw", text: "b" },
      ],
      { color: false },
    );
    expect(text.split("\n")).toEqual(["── run R1 ──", "10:00:01 a", "── run R2 ──", "10:00:01 b", ""]);
  });
});
