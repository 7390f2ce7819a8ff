/**
 * Token usage and cost read from an agent CLI's own output, so budgets work with real CLIs
 * (a model does not know its token counts, so it cannot pass them to `overseer-agent`).
 *
 * Readers, by the runner config's `agent` (each names the stream or file it read as `source`):
 * - codex: `codex exec --json` prints `{"type":"turn.completed","usage":{input_tokens,
 *   cached_input_tokens, output_tokens}}` per turn (summed); without --json it prints
 *   `tokens used` and a total such as `2,580` (counted as input, the split is unknown);
 * - claude: `claude -p --output-format stream-json|json` ends with `{"type":"result",
 *   "total_cost_usd", "usage":{input_tokens, cache_creation_input_tokens,
 *   cache_read_input_tokens, output_tokens}}` (the last one wins);
 * - gemini: `--output-format stream-json` ends with `{"type":"result","stats":{total_tokens,
 *   input_tokens, output_tokens, cached…}}` where output_tokens leaves out thinking tokens
 *   (billed as output) that only total_tokens holds; `--output-format json` prints
 *   `{"response","stats":{"models":{NAME:{"tokens":{prompt, candidates, cached, thoughts}}}}}`
 *   (summed over models);
 * - opencode: `opencode run --format json` prints `{"type":"step_finish","part":{"tokens":
 *   {input, output, reasoning, cache:{read, write}}, "cost"}}` per step (summed; `input`
 *   excludes the cache reads and writes, which are added to it);
 * - copilot: only a rounded human summary on its output; its session file
 *   `session-state/ID/events.jsonl` (under `COPILOT_HOME`, which the preset points into the
 *   run's control dir) has a `{"type":"session.usage_record","data":{"usage":{inputTokens,
 *   outputTokens, cacheReadTokens, reasoningTokens}}}` per model call and ends each session with
 *   `{"type":"session.shutdown","data":{"modelMetrics":{NAME:{"usage":{…}}}}}` (summed over
 *   models and sessions; a session killed before its shutdown counts its calls' records).
 * Every reader only trusts lines that parse as the CLI's JSON events; an agent that echoes such
 * a line in a tool's output could inflate its own count, never hide spend already reported.
 */

export interface HarvestedUsage {
  tokensIn: number;
  tokensOut: number;
  tokensCached: number;
  /** Present when the CLI reported its cost. */
  costUsd?: number;
  /** Where it was read: the CLI and its stream or file (`codex --json turn.completed`…). */
  source: string;
}

/** USD per million tokens, for CLIs that report no cost. */
export interface ModelPrice {
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
  cached_input_usd_per_mtok?: number;
}

type Reader = (lines: readonly unknown[], text: string) => HarvestedUsage | null;

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

type Tokens = Pick<HarvestedUsage, "tokensIn" | "tokensOut" | "tokensCached">;

function noTokens(): Tokens {
  return { tokensIn: 0, tokensOut: 0, tokensCached: 0 };
}

function addTokens(to: Tokens, from: Tokens): void {
  to.tokensIn += from.tokensIn;
  to.tokensOut += from.tokensOut;
  to.tokensCached += from.tokensCached;
}

/**
 * JSON objects of the output: every line that is one, and every pretty-printed object that
 * opens with a `{` line and closes with a `}` line at the start of a line (`--output-format
 * json` of some CLIs).
 */
function jsonLines(text: string): unknown[] {
  const out: unknown[] = [];
  let block: string[] | null = null;
  for (const line of text.split("\n")) {
    if (block) {
      block.push(line);
      if (line.trimEnd() === "}") {
        parseInto(out, block.join("\n"));
        block = null;
      }
      continue;
    }
    if (line.trimEnd() === "{") {
      block = [line];
      continue;
    }
    const trimmed = line.trim();
    if (trimmed.startsWith("{") && trimmed.endsWith("}")) parseInto(out, trimmed);
  }
  return out;
}

function parseInto(out: unknown[], text: string): void {
  try {
    out.push(JSON.parse(text));
  } catch {
    // not an event
  }
}

const codex: Reader = (lines, text) => {
  let found = false;
  const total = noTokens();
  for (const line of lines) {
    const event = record(line);
    if (event?.type !== "turn.completed") continue;
    const usage = record(event.usage);
    if (!usage) continue;
    found = true;
    addTokens(total, {
      tokensIn: num(usage.input_tokens),
      tokensOut: num(usage.output_tokens),
      tokensCached: num(usage.cached_input_tokens),
    });
  }
  if (found) return { ...total, source: "codex --json turn.completed" };
  // Human output: "tokens used\n2,580" (or "tokens used: 2,580"); the last report wins.
  const matches = [...text.matchAll(/tokens used:?\s*\n?\s*([\d,.]+)/gi)];
  const last = matches.at(-1)?.[1];
  if (last === undefined) return null;
  const value = Number(last.replace(/[,.]/g, ""));
  return Number.isFinite(value)
    ? { tokensIn: value, tokensOut: 0, tokensCached: 0, source: "codex 'tokens used' line" }
    : null;
};

const claude: Reader = (lines) => {
  let result: Record<string, unknown> | null = null;
  for (const line of lines) {
    const event = record(line);
    if (event?.type === "result" && record(event.usage)) result = event;
  }
  if (!result) return null;
  const usage = record(result.usage) ?? {};
  const cacheRead = num(usage.cache_read_input_tokens);
  const cacheWrite = num(usage.cache_creation_input_tokens);
  const cost = result.total_cost_usd;
  return {
    tokensIn: num(usage.input_tokens) + cacheRead + cacheWrite,
    tokensOut: num(usage.output_tokens),
    tokensCached: cacheRead,
    source: "claude stream-json result",
    ...(typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? { costUsd: cost } : {}),
  };
};

const gemini: Reader = (lines) => {
  let found: HarvestedUsage | null = null;
  for (const line of lines) {
    const event = record(line);
    const stats = record(event?.stats);
    if (!event || !stats) continue;
    if (event.type === "result") {
      // stream-json: input_tokens is the whole prompt, cached included; total_tokens (the API's
      // totalTokenCount) adds the thinking tokens to input and output.
      const tokensIn = num(stats.input_tokens);
      found = {
        tokensIn,
        tokensOut: Math.max(num(stats.output_tokens), num(stats.total_tokens) - tokensIn),
        tokensCached: num(stats.cached),
        source: "gemini stream-json result",
      };
    } else if ("response" in event && record(stats.models)) {
      // json: the CLI's own per-model metrics; thoughts are billed as output.
      const total = noTokens();
      for (const metrics of Object.values(record(stats.models) ?? {})) {
        const tokens = record(record(metrics)?.tokens) ?? {};
        addTokens(total, {
          tokensIn: num(tokens.prompt),
          tokensOut: num(tokens.candidates) + num(tokens.thoughts),
          tokensCached: num(tokens.cached),
        });
      }
      found = { ...total, source: "gemini json stats" };
    }
  }
  return found;
};

const opencode: Reader = (lines) => {
  let found = false;
  let cost = 0;
  const total = noTokens();
  for (const line of lines) {
    const event = record(line);
    if (event?.type !== "step_finish") continue;
    const part = record(event.part) ?? event;
    const tokens = record(part.tokens);
    if (!tokens) continue;
    found = true;
    const cache = record(tokens.cache) ?? {};
    addTokens(total, {
      tokensIn: num(tokens.input) + num(cache.read) + num(cache.write),
      tokensOut: num(tokens.output) + num(tokens.reasoning),
      tokensCached: num(cache.read),
    });
    cost += num(part.cost);
  }
  return found
    ? { ...total, source: "opencode --format json step_finish", ...(cost > 0 ? { costUsd: cost } : {}) }
    : null;
};

/** Tokens of one Copilot usage object ({inputTokens, outputTokens, reasoningTokens, cacheReadTokens}). */
function copilotTokens(usage: Record<string, unknown>): Tokens {
  // inputTokens is the whole prompt, cache reads and writes included.
  return {
    tokensIn: num(usage.inputTokens),
    tokensOut: num(usage.outputTokens) + num(usage.reasoningTokens),
    tokensCached: num(usage.cacheReadTokens),
  };
}

const copilot: Reader = (lines) => {
  let found = false;
  const total = noTokens();
  // Per-call records of the session segment not yet closed by a shutdown: a run killed before
  // Copilot wrote its shutdown (SIGKILL after the grace period) still counts its calls.
  let calls = noTokens();
  const closeSegment = (shutdown: Tokens | null) => {
    // The larger of the shutdown's totals and the calls' sum, field by field: a line echoed
    // into the file can inflate the count, never hide calls already recorded.
    addTokens(total, {
      tokensIn: Math.max(calls.tokensIn, shutdown?.tokensIn ?? 0),
      tokensOut: Math.max(calls.tokensOut, shutdown?.tokensOut ?? 0),
      tokensCached: Math.max(calls.tokensCached, shutdown?.tokensCached ?? 0),
    });
    calls = noTokens();
  };
  for (const line of lines) {
    const event = record(line);
    if (event?.type === "session.start") closeSegment(null);
    if (event?.type === "session.usage_record") {
      const usage = record(record(event.data)?.usage);
      if (!usage) continue;
      found = true;
      addTokens(calls, copilotTokens(usage));
      continue;
    }
    if (event?.type !== "session.shutdown") continue;
    const models = record(record(event.data)?.modelMetrics);
    if (!models) continue;
    found = true;
    const shutdown = noTokens();
    for (const metrics of Object.values(models))
      addTokens(shutdown, copilotTokens(record(record(metrics)?.usage) ?? {}));
    closeSegment(shutdown);
  }
  closeSegment(null);
  return found ? { ...total, source: "copilot session-state events.jsonl" } : null;
};

const READERS: Readonly<Record<string, Reader>> = { codex, claude, gemini, opencode, copilot };

/**
 * Usage of one run from its output and the CLI's session files (`files`: their text, read by
 * the worker from the run's control dir), by the reader of `agent` (null/unknown: every reader
 * is tried, first match wins). Cost comes from `price` (the project's table for its model: what
 * the operator actually pays, e.g. through a gateway) when there is one, else from the CLI's
 * own figure.
 */
export function harvestUsage(
  output: string,
  agent: string | null | undefined,
  price?: ModelPrice | null,
  files: readonly string[] = [],
): HarvestedUsage | null {
  const text = files.length === 0 ? output : [output, ...files].join("\n");
  const lines = jsonLines(text);
  const names = agent && READERS[agent] ? [agent] : Object.keys(READERS);
  for (const name of names) {
    const found = READERS[name]?.(lines, output);
    if (!found) continue;
    const usage: HarvestedUsage = { ...found };
    if (price) usage.costUsd = costOf(usage, price);
    return usage;
  }
  return null;
}

/** Cost of `usage` at `price`: cached input at its own rate (input rate when unset). */
export function costOf(
  usage: Pick<HarvestedUsage, "tokensIn" | "tokensOut" | "tokensCached">,
  price: ModelPrice,
) {
  const cachedRate = price.cached_input_usd_per_mtok ?? price.input_usd_per_mtok;
  const fresh = Math.max(0, usage.tokensIn - usage.tokensCached);
  return (
    (fresh * price.input_usd_per_mtok +
      usage.tokensCached * cachedRate +
      usage.tokensOut * price.output_usd_per_mtok) /
    1_000_000
  );
}
