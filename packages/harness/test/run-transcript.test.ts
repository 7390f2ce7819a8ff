import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeRunOutput, lastWords } from "../src/run-transcript.ts";

/** The model's last words, read from each CLI's recorded output (test/fixtures/agent-output). */
const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/agent-output/${name}`, import.meta.url), "utf8");

describe("lastWords: the model's last message and command, per CLI", () => {
  it("codex --json: the last agent_message and command_execution with its exit code", () => {
    expect(lastWords(fixture("codex-exec.jsonl"), "codex")).toEqual({
      message: "Created hello.txt.",
      command: "bash -lc 'printf hello > hello.txt' (exit 0)",
    });
  });

  it("claude stream-json: the result text (no Bash call in this run)", () => {
    expect(lastWords(fixture("claude-stream.jsonl"), "claude")).toEqual({
      message: "Created hello.txt.",
      command: null,
    });
  });

  it("opencode --format json: the last text part and bash tool input", () => {
    const words = lastWords(fixture("opencode-1.18.33-run.jsonl"), "opencode");
    expect(words.message).toBe("Done.");
    expect(words.command).toMatch(/^if \[ "\$OVERSEER_ACTION" = review \]; then/);
  });

  it("gemini stream-json: the assistant's reply and run_shell_command", () => {
    expect(lastWords(fixture("gemini-stream.jsonl"), "gemini")).toEqual({
      message: "Created hello.txt and submitted.",
      command: "overseer-agent submit --message-file msg.txt",
    });
  });

  it("copilot text: the reply before its footer and the shell block", () => {
    const words = lastWords(fixture("copilot-stdout.txt"), "copilot");
    expect(words.message).toBe("Done.");
    expect(words.command).toMatch(/^if \[ "\$OVERSEER_ACTION" = review \]; then\noverseer-agent approve/);
  });
});

describe("describeRunOutput", () => {
  it("names the last words, or the last plain lines without JSON events", () => {
    expect(describeRunOutput(fixture("codex-exec.jsonl"), "codex")).toBe(
      "The model's last message: Created hello.txt.\nIts last command: bash -lc 'printf hello > hello.txt' (exit 0)",
    );
    expect(describeRunOutput('{"type":"turn.started"}\nsh: 1: make: not found\n', null)).toBe(
      "Last lines of the run:\nsh: 1: make: not found",
    );
    expect(describeRunOutput("", "codex")).toBe("The run printed nothing readable.");
  });
});
