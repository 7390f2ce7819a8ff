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

interface Recorded {
  fixture: string;
  what: string;
  /** The entries' kinds in order (`summary`). */
  expected: string[];
  /** What else this CLI's output must show. */
  also?: (entries: TranscriptEntry[], text: string) => void;
}

const RECORDED: Recorded[] = [
  {
    fixture: "codex-0.171.0.jsonl",
    what: "the patch's edit, the command with exit 127, the notice summarised",
    expected: [
      "raw", // its warning about PATH aliases under /tmp, on stderr
      "system",
      "edit add hello.txt",
      "call shell",
      "result 127",
      "assistant: Done.",
      "usage",
    ],
    also: (entries) => {
      expect(entries[1]).toMatchObject({
        text: expect.stringMatching(/^Codex has no metadata for model mock-codex/),
      });
      expect(entries[4]).toMatchObject({
        output: expect.stringContaining("overseer-agent: command not found"),
      });
    },
  },
  {
    fixture: "claude-2.1.332.jsonl",
    what: "Write then Bash, each result linked to its call, the init event summarised",
    expected: [
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
    ],
    also: (entries, text) => {
      const init = text.split("\n").find((line) => line.includes('"subtype":"init"')) ?? "";
      expect((entries[0] as { text: string }).text.length * 10).toBeLessThan(init.length);
      const calls = entries.filter((e) => e.kind === "tool_call").map((e) => e.callId);
      const results = entries.filter((e) => e.kind === "tool_result").map((e) => e.callId);
      expect(results).toEqual(calls);
    },
  },
  {
    fixture: "gemini-0.61.0.jsonl",
    what: "write_file and the shell command (its stream-json has no exit code)",
    expected: [
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
    ],
    also: (entries) => expect(entries.at(-1)).toMatchObject({ model: "mock-gemini", inputTokens: 3000 }),
  },
  {
    fixture: "opencode-1.18.33.jsonl",
    what: "write then bash with exit 127, usage and cost per step",
    expected: [
      "call write",
      "result null",
      "edit add hello.txt",
      "usage",
      "call bash",
      "result 127",
      "usage",
      "assistant: Done.",
      "usage",
    ],
  },
  {
    fixture: "copilot-1.0.102.jsonl",
    what: "session events: the system prompt summarised, create then bash with exit 127",
    expected: [
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
    ],
    also: (entries) =>
      expect((entries[2] as { text: string }).text).toMatch(/^Copilot's system prompt \(\d+ characters\)\.$/),
  },
];

describe("recorded output of the pinned CLIs", () => {
  it.each(RECORDED)("$fixture: $what", ({ fixture, expected, also }) => {
    const { entries, text } = read(fixture);
    expect(summary(entries)).toEqual(expected);
    also?.(entries, text);
  });
});
