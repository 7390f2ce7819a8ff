import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { harvestUsage } from "../src/usage-harvester.ts";

/**
 * The usage readers against recorded-shape output of each CLI (test/fixtures/agent-output: the
 * event shapes the CLIs document for their machine-readable modes, with realistic numbers).
 */
const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/agent-output/${name}`, import.meta.url), "utf8");

/** CLIs whose output alone gives the whole usage record. */
const RECORDED: { name: string; agent: string; output: string; usage: ReturnType<typeof harvestUsage> }[] = [
  {
    name: "codex: turn.completed of `codex exec --json`",
    agent: "codex",
    output: fixture("codex-exec.jsonl"),
    usage: {
      tokensIn: 24763,
      tokensOut: 122,
      tokensCached: 24448,
      source: "codex --json turn.completed",
    },
  },
  {
    name: "claude: the result event of stream-json with its cost (per-message usage is not summed)",
    agent: "claude",
    output: fixture("claude-stream.jsonl"),
    usage: {
      tokensIn: 12 + 2312 + 35565,
      tokensOut: 158,
      tokensCached: 35565,
      costUsd: 0.0212,
      source: "claude stream-json result",
    },
  },
  // Verbatim stdout of the pinned CLI (test/agents: 1000 prompt tokens of which 200 cached,
  // 50 out per answer); opencode reports `input` without the cached part.
  {
    name: "opencode 1.18.33: its real `run --format json` output (two steps against the suite's mock model)",
    agent: "opencode",
    output: fixture("opencode-1.18.33-run.jsonl"),
    usage: {
      tokensIn: 2 * 1000,
      tokensOut: 2 * 50,
      tokensCached: 2 * 200,
      source: "opencode --format json step_finish",
    },
  },
  {
    name: "gemini: the result stats of stream-json",
    agent: "gemini",
    output: fixture("gemini-stream.jsonl"),
    usage: {
      tokensIn: 24939,
      tokensOut: 174,
      tokensCached: 21263,
      source: "gemini stream-json result",
    },
  },
  // The result line of @google/gemini-cli 0.61.0 after two responses, each reporting
  // promptTokenCount 1000 (200 cached), candidatesTokenCount 50 and thoughtsTokenCount 30.
  {
    name: "gemini: thinking tokens, only in stream-json's total_tokens, count as output",
    agent: "gemini",
    output:
      '{"type":"result","timestamp":"2026-12-01T08:48:17.562Z","status":"success","stats":{"total_tokens":2160,"input_tokens":2000,"output_tokens":100,"cached":400,"input":1600,"duration_ms":1510,"tool_calls":1,"models":{"mock-gemini":{"total_tokens":2160,"input_tokens":2000,"output_tokens":100,"cached":400,"input":1600}}}}',
    usage: {
      tokensIn: 2000,
      tokensOut: 100 + 60,
      tokensCached: 400,
      source: "gemini stream-json result",
    },
  },
  {
    name: "gemini: the pretty-printed per-model stats of --output-format json, summed over models",
    agent: "gemini",
    output: `Loaded cached credentials.\n${fixture("gemini.json")}`,
    usage: {
      tokensIn: 24939 + 1200,
      tokensOut: 20 + 154 + 35,
      tokensCached: 21263,
      source: "gemini json stats",
    },
  },
];

describe("usage from each CLI's recorded output", () => {
  it.each(RECORDED)("$name", ({ output, agent, usage }) => {
    expect(harvestUsage(output, agent)).toEqual(usage);
  });

  it("opencode: step_finish parts summed, cache reads and writes counted as input, reasoning as output, cost summed", () => {
    const usage = harvestUsage(fixture("opencode-run.jsonl"), "opencode");
    expect(usage).toMatchObject({
      tokensIn: 9800 + 4096 + 512 + 1200 + 10240,
      tokensOut: 210 + 64 + 40,
      tokensCached: 4096 + 10240,
      source: "opencode --format json step_finish",
    });
    expect(usage?.costUsd).toBeCloseTo(0.0168, 9);
  });

  // Copilot fixtures are the real files of @github/copilot 1.0.102 (the version test:agents pins),
  // recorded against test/agents/mock-copilot-api.ts, whose every call reports 1000 input (200
  // cached) and 50 output tokens; only the system prompt line is left out.
  it("copilot: nothing from its rounded summary; the session file's session.shutdown metrics", () => {
    const output = fixture("copilot-stdout.txt");
    expect(harvestUsage(output, "copilot")).toBeNull();
    expect(harvestUsage(output, "copilot", null, [fixture("copilot-events.jsonl")])).toEqual({
      tokensIn: 2000,
      tokensOut: 100,
      tokensCached: 400,
      source: "copilot session-state events.jsonl",
    });
  });

  it("copilot: sessions are summed; a session killed before its shutdown counts its call records", () => {
    const events = fixture("copilot-events.jsonl");
    const killed = fixture("copilot-killed-events.jsonl");
    expect(killed).not.toContain('"session.shutdown"');
    expect(harvestUsage("", "copilot", null, [killed])).toMatchObject({ tokensIn: 1000, tokensOut: 50 });
    expect(harvestUsage("", "copilot", null, [events, killed, events])).toMatchObject({
      tokensIn: 5000,
      tokensOut: 250,
      tokensCached: 1000,
    });
  });

  it("copilot: a shutdown line reporting less than the recorded calls hides none of them", () => {
    const events = fixture("copilot-events.jsonl");
    const understated = events.replace(/"inputTokens":2000/g, '"inputTokens":1');
    expect(harvestUsage("", "copilot", null, [understated])?.tokensIn).toBe(2000);
  });

  it("an unknown agent tries every reader; a price table overrides the CLI's own cost", () => {
    expect(harvestUsage(fixture("gemini-stream.jsonl"), null)?.source).toBe("gemini stream-json result");
    const priced = harvestUsage(fixture("claude-stream.jsonl"), "claude", {
      input_usd_per_mtok: 3,
      output_usd_per_mtok: 15,
      cached_input_usd_per_mtok: 0.3,
    });
    expect(priced?.costUsd).toBeCloseTo(((12 + 2312) * 3 + 35565 * 0.3 + 158 * 15) / 1_000_000, 9);
  });

  it("one reader's events do not count for another CLI", () => {
    expect(harvestUsage(fixture("codex-exec.jsonl"), "gemini")).toBeNull();
    expect(harvestUsage(fixture("opencode-run.jsonl"), "claude")).toBeNull();
  });
});
