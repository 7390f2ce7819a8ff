import { describe, expect, it } from "vitest";
import { costOf, harvestUsage } from "../src/usage-harvester.ts";

describe("harvestUsage", () => {
  it("sums Codex --json turn.completed events", () => {
    const output = [
      '{"type":"thread.started","thread_id":"t"}',
      '{"type":"item.completed","item":{"type":"command_execution","aggregated_output":"ok"}}',
      '{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":200,"output_tokens":80}}',
      '{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":300}}',
    ].join("\n");
    expect(harvestUsage(output, "codex")).toEqual({
      tokensIn: 2200,
      tokensOut: 380,
      tokensCached: 200,
      source: "codex --json turn.completed",
    });
  });

  it("reads Codex's human 'tokens used' total", () => {
    expect(harvestUsage("codex\nDone.\ntokens used\n2,580\n", "codex")).toMatchObject({ tokensIn: 2580 });
  });

  it("takes Claude's last result event with its reported cost", () => {
    const output = [
      '{"type":"system","subtype":"init"}',
      '{"type":"result","subtype":"success","total_cost_usd":0.0123,"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":900,"output_tokens":55}}',
    ].join("\n");
    expect(harvestUsage(output, "claude")).toEqual({
      tokensIn: 1010,
      tokensOut: 55,
      tokensCached: 900,
      costUsd: 0.0123,
      source: "claude stream-json result",
    });
  });

  it("fills the cost from the price table when the CLI reports none", () => {
    const output =
      '{"type":"turn.completed","usage":{"input_tokens":1000000,"cached_input_tokens":500000,"output_tokens":100000}}';
    const usage = harvestUsage(output, "codex", {
      input_usd_per_mtok: 2,
      output_usd_per_mtok: 10,
      cached_input_usd_per_mtok: 0.5,
    });
    expect(usage?.costUsd).toBeCloseTo(1 + 0.25 + 1, 6);
    expect(
      costOf(
        { tokensIn: 10, tokensOut: 0, tokensCached: 0 },
        { input_usd_per_mtok: 1, output_usd_per_mtok: 1 },
      ),
    ).toBeCloseTo(0.00001, 9);
  });

  it("finds nothing in output without usage", () => {
    expect(harvestUsage("hello\nworld\n", "claude")).toBeNull();
    expect(harvestUsage("", null)).toBeNull();
  });
});
