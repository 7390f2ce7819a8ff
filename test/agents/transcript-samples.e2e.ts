import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { COPILOT_HOME_DIR } from "@overseer/project-config";
import { parseTranscript, type TranscriptEntry } from "@overseer/transcript";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { ensureAgent, selectedAgents } from "./agent-install.ts";
import { MockModelServer } from "./mock-model-server.ts";
import { presetCommand } from "./preset-command.ts";

/**
 * What each pinned CLI prints, run with its preset's command against the scripted model with an
 * edit step (mock-edit-step.ts): the model writes hello.txt with the CLI's own file tool, runs a
 * shell command (exit 127: no overseer-agent outside a run), then answers "Done.". The
 * transcript parsers (@overseer/transcript) must find the message, the tool call, its result
 * with the exit code, and the edit. With OVERSEER_RECORD_FIXTURES=1 each output (Copilot's
 * session file) is written to packages/transcript/test/fixtures, the samples the parsers' unit
 * tests read.
 */

const RECORDING = process.env.OVERSEER_RECORD_FIXTURES === "1";
const RUN_MS = 150_000;
const EDIT = { file: "hello.txt", content: "hello from a real agent CLI\n" };
const FIXTURES = new URL("../../packages/transcript/test/fixtures/", import.meta.url);

/** Copilot's session events (its stdout is human text), read from its home in the control dir. */
function copilotEvents(control: string): string {
  const state = path.join(control, COPILOT_HOME_DIR, "session-state");
  if (!existsSync(state)) return "";
  return readdirSync(state)
    .map((id) => path.join(state, id, "events.jsonl"))
    .filter((file) => existsSync(file))
    .map((file) => readFileSync(file, "utf8"))
    .join("");
}

async function record(kind: string): Promise<{ output: string; checkout: string; root: string }> {
  const agent = await ensureAgent(selectedAgents().find((a) => a.kind === kind) as never);
  const model = await new MockModelServer({ edit: EDIT }).start();
  const root = mkdtempSync(path.join(tmpdir(), "cli-transcript-"));
  try {
    const prompt = "Create hello.txt with a greeting.";
    const { argv, env, dirs } = presetCommand(agent, model.origin, root, prompt);
    const run = await execa(argv[0] as string, argv.slice(1), {
      cwd: dirs.checkout,
      env,
      extendEnv: false,
      input: prompt,
      all: true,
      reject: false,
      timeout: RUN_MS,
    });
    expect(run.timedOut).toBe(false);
    expect(model.requests.map((r) => r.answered)).toEqual(
      expect.arrayContaining(["edit-call", "tool-call", "final"]),
    );
    const output = kind === "copilot" ? copilotEvents(dirs.control) : (run.all ?? "");
    return { output, checkout: readFileSync(path.join(dirs.checkout, EDIT.file), "utf8"), root };
  } finally {
    await model.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const last = <K extends TranscriptEntry["kind"]>(entries: TranscriptEntry[], kind: K) =>
  entries.filter((e): e is Extract<TranscriptEntry, { kind: K }> => e.kind === kind).at(-1);

describe.each(selectedAgents().map((a) => [a.kind, a.version] as const))(
  "transcript samples: %s %s",
  (kind, version) => {
    it(
      "reads the message, the tool calls, the command's exit code and the edit",
      async () => {
        const { output, checkout } = await record(kind);
        if (RECORDING) writeFileSync(new URL(`${kind}-${version}.jsonl`, FIXTURES), output);
        expect(checkout).toBe(EDIT.content);
        const entries = parseTranscript(output, kind);
        const kinds = new Set(entries.map((e) => e.kind));
        for (const wanted of ["message", "tool_call", "tool_result", "file_edit", "usage"] as const)
          expect(kinds, `${wanted} in ${JSON.stringify(entries).slice(0, 3000)}`).toContain(wanted);
        expect(last(entries, "message")).toMatchObject({ role: "assistant", text: "Done." });
        expect(last(entries, "file_edit")?.path).toMatch(/(^|\/)hello\.txt$/);
        const shell = entries.find((e) => e.kind === "tool_call" && e.command?.includes("overseer-agent"));
        expect(shell, "the shell call names its command").toBeDefined();
        const result = entries.find(
          (e) => e.kind === "tool_result" && shell?.kind === "tool_call" && e.callId === shell.callId,
        );
        // Gemini's stream-json shows a command's output, not its exit status.
        expect(result, "the command's result is linked to its call").toMatchObject({
          exitCode: kind === "gemini" ? null : 127,
          output: expect.stringContaining("overseer-agent: command not found"),
        });
      },
      RUN_MS + 30_000,
    );
  },
);
