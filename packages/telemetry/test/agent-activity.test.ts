import { createTranscriptFeed, type TranscriptEntry } from "@overseer/transcript";
import { describe, expect, it } from "vitest";
import { AgentActivityRecorder, agentActivitySpans } from "../src/agent-activity.ts";

const T0 = Date.parse("2026-12-03T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const window = { start: T0, end: T0 + 10_000 };

/** Codex `exec --json` lines, each stamped `ms` after T0 (as the worker reads them). */
function codexEntries(lines: [number, object][]): TranscriptEntry[] {
  let now = T0;
  const feed = createTranscriptFeed("codex", { now: () => new Date(now).toISOString() });
  const entries: TranscriptEntry[] = [];
  for (const [ms, event] of lines) {
    now = T0 + ms;
    entries.push(...feed.write(`${JSON.stringify(event)}\n`));
  }
  return [...entries, ...feed.end()];
}

const command = (id: string, phase: "started" | "completed", cmd: string, exit: number | null) => ({
  type: `item.${phase}`,
  item: { id, type: "command_execution", command: cmd, aggregated_output: "", exit_code: exit },
});

describe("agentActivitySpans", () => {
  it("cuts the agent's time into model calls and tool calls, usage on the model call it follows", () => {
    const entries = codexEntries([
      [1000, command("a", "started", "ls", null)],
      [1500, command("a", "completed", "ls", 0)],
      [2500, command("b", "started", "make test", null)],
      [6000, command("b", "completed", "make test", 2)],
      [7000, { type: "item.completed", item: { id: "m", type: "agent_message", text: "done" } }],
      [
        7100,
        { type: "turn.completed", usage: { input_tokens: 300, cached_input_tokens: 100, output_tokens: 20 } },
      ],
    ]);
    const { spans, dropped } = agentActivitySpans(entries, window, 100);
    expect(dropped).toBe(0);
    expect(spans.map((s) => [s.name, s.start - T0, s.end - T0])).toEqual([
      ["chat", 0, 1000],
      ["execute_tool shell", 1000, 1500],
      ["chat", 1500, 2500],
      ["execute_tool shell", 2500, 6000],
      ["chat", 6000, 7000],
    ]);
    expect(spans[3]?.attributes).toMatchObject({
      "gen_ai.tool.name": "shell",
      "gen_ai.tool.call.id": "b",
      "overseer.tool.command": "make test",
      "overseer.tool.exit_code": 2,
    });
    expect(spans[4]?.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 300,
      "gen_ai.usage.output_tokens": 20,
      "gen_ai.usage.cache_read.input_tokens": 100,
    });
  });

  it("names a model call after the usage's model, ends an unanswered tool call at the agent's end", () => {
    const entries: TranscriptEntry[] = [
      { seq: 0, at: at(500), kind: "tool_call", callId: null, tool: "edit", command: null, args: null },
      {
        seq: 1,
        at: at(600),
        kind: "usage",
        inputTokens: 5,
        outputTokens: 6,
        cachedInputTokens: null,
        model: "gpt-x",
        costUsd: 0.01,
      },
    ];
    const { spans } = agentActivitySpans(entries, window, 100);
    expect(spans.map((s) => [s.name, s.start - T0, s.end - T0])).toEqual([
      ["chat gpt-x", 0, 500],
      ["execute_tool edit", 500, 10_000],
    ]);
    expect(spans[0]?.attributes).toMatchObject({
      "gen_ai.request.model": "gpt-x",
      "overseer.usage.cost_usd": 0.01,
    });
  });

  it("holds times inside the window and never backwards; entries without a time take the last one", () => {
    const entries: TranscriptEntry[] = [
      { seq: 0, at: at(-5000), kind: "message", role: "assistant", text: "" },
      { seq: 1, at: at(3000), kind: "tool_call", callId: "x", tool: "shell", command: "true", args: null },
      { seq: 2, at: at(2000), kind: "tool_result", callId: "x", exitCode: 0, output: "", truncated: false },
      { seq: 3, at: null, kind: "reasoning", text: "" },
      { seq: 4, at: at(99_000), kind: "message", role: "assistant", text: "" },
    ];
    const { spans } = agentActivitySpans(entries, window, 100);
    expect(spans.map((s) => [s.name, s.start - T0, s.end - T0])).toEqual([
      ["chat", 0, 3000],
      ["execute_tool shell", 3000, 3000],
      ["chat", 3000, 10_000],
    ]);
  });

  it("keeps at most maxSpans and counts the rest", () => {
    const entries = codexEntries(
      Array.from(
        { length: 10 },
        (_, i) => [i * 10, command(`c${i}`, "completed", "true", 0)] as [number, object],
      ),
    );
    const { spans, dropped } = agentActivitySpans(entries, window, 4);
    expect(spans).toHaveLength(4);
    expect(dropped).toBe(16);
  });

  it("is empty for an agent whose output has no parser (raw lines only)", () => {
    const recorder = new AgentActivityRecorder(null, 100);
    recorder.write("just text\n");
    expect(agentActivitySpans(recorder.end().entries, window, 100).spans).toEqual([]);
  });
});

describe("AgentActivityRecorder", () => {
  it("keeps what spans need, drops texts and outputs, and stops at maxEntries", () => {
    const recorder = new AgentActivityRecorder("codex", 2, () => at(1));
    recorder.write(
      `${JSON.stringify({ type: "item.completed", item: { id: "m", type: "agent_message", text: "secret plan" } })}\n`,
    );
    recorder.write(`${JSON.stringify(command("a", "completed", "ls", 0)).slice(0, 20)}`);
    recorder.write(`${JSON.stringify(command("a", "completed", "ls", 0)).slice(20)}\n`);
    const { entries, dropped } = recorder.end();
    expect(entries.map((e) => e.kind)).toEqual(["message", "tool_call"]);
    expect(entries[0]).toMatchObject({ kind: "message", text: "" });
    expect(dropped).toBe(1);
  });
});
