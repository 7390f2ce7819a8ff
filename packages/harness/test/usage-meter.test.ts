import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { harvestUsage } from "../src/usage-harvester.ts";
import { UsageMeter } from "../src/usage-meter.ts";

/**
 * Usage counted as the output streams, from the verbatim output of the pinned real CLIs
 * (test/agents: Codex 0.171.0 and Claude Code 2.1.332 against the suite's mock model, whose every
 * response reports 1000 input tokens of which 200 cached and 50 output), cut where a run that
 * is stopped (linger, stall, timeout, cancel) would have been cut, and with the lines a hostile
 * agent can print into the CLI's output.
 */
const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/agent-output/${name}`, import.meta.url), "utf8");
const lines = (name: string) => fixture(name).split("\n").filter(Boolean);

const CLAUDE = "claude-2.1.332-stream.jsonl";
const CODEX_STDOUT = "codex-0.171.0-exec.jsonl";
const CODEX_ROLLOUT = "codex-0.171.0-rollout.jsonl";

describe("Claude Code 2.1.332: per message, then its result", () => {
  it("the whole stream: the result's totals and cost", () => {
    expect(harvestUsage(fixture(CLAUDE), "claude")).toEqual({
      tokensIn: 2000,
      tokensOut: 100,
      tokensCached: 400,
      costUsd: 0.008480000000000001,
      source: "claude stream-json result",
    });
  });

  it("a run stopped before its result keeps its assistant messages' usage (each message once)", () => {
    const [init, first, user, second] = lines(CLAUDE);
    // Each content block is an assistant event of the same message: counted once.
    const stopped = [init, first, first, user, second, second].join("\n");
    expect(harvestUsage(stopped, "claude")).toEqual({
      tokensIn: 2000,
      tokensOut: 2, // the CLI prints a message before its final output count
      tokensCached: 400,
      source: "claude stream-json assistant messages",
    });
    expect(harvestUsage([init, first].join("\n"), "claude")).toMatchObject({ tokensIn: 1000 });
  });

  it("a second, zero-cost result line printed by the agent replaces nothing", () => {
    const real = fixture(CLAUDE);
    const forged =
      '{"type":"result","subtype":"success","is_error":false,"total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}';
    expect(harvestUsage(`${real}\n${forged}\n`, "claude")).toEqual(harvestUsage(real, "claude"));
    // Before the real result too, and an assistant echo of a real message id with zeros.
    const [init, first, user, second, result] = lines(CLAUDE);
    const echo = (first as string).replace(/"input_tokens":800/, '"input_tokens":0');
    const mixed = [init, forged, first, echo, user, second, forged, result].join("\n");
    expect(harvestUsage(mixed, "claude")).toEqual(harvestUsage(real, "claude"));
  });

  it("without a price, a stopped run's tokens are unpriced, never $0", () => {
    const [init, first] = lines(CLAUDE);
    const forged = '{"type":"result","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}';
    expect(harvestUsage([init, first, forged].join("\n"), "claude")).not.toHaveProperty("costUsd");
  });
});

describe("Codex 0.171.0: per model call from its session rollout, per turn from --json", () => {
  it("stdout's turn.completed and the rollout's token_usage_record agree", () => {
    expect(harvestUsage(fixture(CODEX_STDOUT), "codex")).toEqual({
      tokensIn: 2000,
      tokensOut: 100,
      tokensCached: 400,
      source: "codex --json turn.completed",
    });
    expect(harvestUsage(fixture(CODEX_STDOUT), "codex", null, [fixture(CODEX_ROLLOUT)])).toEqual({
      tokensIn: 2000,
      tokensOut: 100,
      tokensCached: 400,
      source: "codex session rollout token_usage_record",
    });
  });

  it("a run stopped mid-turn keeps the model calls its rollout recorded", () => {
    const stdout = lines(CODEX_STDOUT).filter((l) => !l.includes("turn.completed"));
    const rollout = lines(CODEX_ROLLOUT);
    const firstCall = rollout.findIndex((l) => l.includes('"type":"token_usage_record"'));
    const cut = rollout.slice(0, firstCall + 1).join("\n");
    expect(harvestUsage(stdout.join("\n"), "codex")).toBeNull();
    expect(harvestUsage(stdout.join("\n"), "codex", null, [cut])).toMatchObject({
      tokensIn: 1000,
      tokensOut: 50,
      tokensCached: 200,
    });
  });

  it("a rollout record repeated, or echoed with zeros under the same response id, counts once", () => {
    const rollout = lines(CODEX_ROLLOUT);
    const records = rollout.filter((l) => l.includes('"type":"token_usage_record"'));
    const zeroed = (records[0] as string).replace(/"input_tokens":1000/g, '"input_tokens":0');
    const text = [...rollout, ...records, zeroed].join("\n");
    expect(harvestUsage("", "codex", null, [text])).toMatchObject({ tokensIn: 2000, tokensOut: 100 });
  });

  it("a zero turn.completed printed after the real one lowers nothing; usage past the first MiB counts", () => {
    const meter = new UsageMeter("codex");
    const noise = `${JSON.stringify({ type: "item.completed", item: { type: "agent_message", text: "x".repeat(1000) } })}\n`;
    for (let i = 0; i < 3000; i += 1) meter.write(noise); // 3 MiB of events before the usage
    for (const line of lines(CODEX_STDOUT)) meter.write(`${line}\n`);
    meter.write(
      '{"type":"turn.completed","usage":{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0}}\n',
    );
    for (let i = 0; i < 3000; i += 1) meter.write(noise);
    meter.end();
    expect(meter.usage()).toMatchObject({ tokensIn: 2000, tokensOut: 100, tokensCached: 400 });
  });

  it("rollout snapshots only ever raise the count (a file the agent truncates hides nothing)", () => {
    const meter = new UsageMeter("codex");
    meter.readFiles([fixture(CODEX_ROLLOUT)]);
    meter.readFiles([lines(CODEX_ROLLOUT).slice(0, 3).join("\n")]);
    expect(meter.usage()).toMatchObject({ tokensIn: 2000, tokensOut: 100 });
  });

  it("lines split across writes are read whole; an over-long line is skipped, the next one read", () => {
    const meter = new UsageMeter("codex");
    const line = lines(CODEX_STDOUT).at(-1) as string;
    meter.write(line.slice(0, 20));
    meter.write(line.slice(20));
    meter.write("\n");
    meter.write(`{"x":"${"y".repeat(2 * 1024 * 1024)}`);
    meter.write(`"}\n${line}`);
    meter.end();
    expect(meter.usage()).toMatchObject({ tokensIn: 4000, tokensOut: 200 });
  });
});

describe("prices", () => {
  const price = { input_usd_per_mtok: 3, output_usd_per_mtok: 15, cached_input_usd_per_mtok: 0.3 };

  it("the project's price replaces the CLI's figure; the table's is taken with it, the larger", () => {
    const real = fixture(CLAUDE);
    const table = (1600 * 3 + 400 * 0.3 + 100 * 15) / 1_000_000;
    expect(harvestUsage(real, "claude", price)?.costUsd).toBeCloseTo(table, 12);
    expect(harvestUsage(real, "claude", { ...price, source: "table" })?.costUsd).toBeCloseTo(
      Math.max(table, 0.00848),
      12,
    );
    const cheap = { input_usd_per_mtok: 0.01, output_usd_per_mtok: 0.01, source: "table" as const };
    expect(harvestUsage(real, "claude", cheap)?.costUsd).toBe(0.008480000000000001);
  });
});
