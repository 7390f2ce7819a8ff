/**
 * Token usage and cost read from an agent CLI's own output, so budgets work with real CLIs
 * (a model does not know its token counts, so it cannot pass them to `overseer-agent`).
 *
 * Readers, by the runner config's `agent`:
 * - codex: `codex exec --json` prints `{"type":"turn.completed","usage":{input_tokens,
 *   cached_input_tokens, output_tokens}}` per turn (summed); without --json it prints
 *   `tokens used` and a total such as `2,580` (counted as input, the split is unknown);
 * - claude: `claude -p --output-format stream-json|json` ends with `{"type":"result",
 *   "total_cost_usd", "usage":{input_tokens, cache_creation_input_tokens,
 *   cache_read_input_tokens, output_tokens}}` (the last one wins);
 * - gemini: `--output-format stream-json|json` `stats` with input/output/cached token counts;
 * - opencode: `--format json` `step_finish` parts with `tokens` and `cost` (summed).
 * Every reader only trusts lines that parse as the CLI's JSON events; an agent that echoes such
 * a line in a tool's output could inflate its own count, never hide spend already reported.
 */

export interface HarvestedUsage {
  tokensIn: number;
  tokensOut: number;
  tokensCached: number;
  /** Present when the CLI reported its cost. */
  costUsd?: number;
  /** The reader that found it (`codex`, `claude`…). */
  source: string;
}

/** USD per million tokens, for CLIs that report no cost. */
export interface ModelPrice {
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
  cached_input_usd_per_mtok?: number;
}

type Reader = (lines: readonly unknown[], text: string) => Omit<HarvestedUsage, "source"> | null;

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** Lines of the output that are JSON objects. */
function jsonLines(text: string): unknown[] {
  const out: unknown[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("{") || !trimmed.endsWith("}")) continue;
    try {
      out.push(JSON.parse(trimmed));
    } catch {
      // not an event
    }
  }
  return out;
}

const codex: Reader = (lines, text) => {
  let found = false;
  const total = { tokensIn: 0, tokensOut: 0, tokensCached: 0 };
  for (const line of lines) {
    const event = record(line);
    if (event?.type !== "turn.completed") continue;
    const usage = record(event.usage);
    if (!usage) continue;
    found = true;
    total.tokensIn += num(usage.input_tokens);
    total.tokensCached += num(usage.cached_input_tokens);
    total.tokensOut += num(usage.output_tokens);
  }
  if (found) return total;
  // Human output: "tokens used\n2,580" (or "tokens used: 2,580"); the last report wins.
  const matches = [...text.matchAll(/tokens used:?\s*\n?\s*([\d,.]+)/gi)];
  const last = matches.at(-1)?.[1];
  if (last === undefined) return null;
  const value = Number(last.replace(/[,.]/g, ""));
  return Number.isFinite(value) ? { tokensIn: value, tokensOut: 0, tokensCached: 0 } : null;
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
    ...(typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? { costUsd: cost } : {}),
  };
};

const gemini: Reader = (lines) => {
  let stats: Record<string, unknown> | null = null;
  for (const line of lines) {
    const event = record(line);
    const candidate = record(event?.stats);
    if (candidate) stats = candidate;
  }
  if (!stats) return null;
  return {
    tokensIn: num(stats.input_tokens ?? stats.input),
    tokensOut: num(stats.output_tokens ?? stats.output),
    tokensCached: num(stats.cached ?? stats.cached_tokens),
  };
};

const opencode: Reader = (lines) => {
  let found = false;
  let cost = 0;
  const total = { tokensIn: 0, tokensOut: 0, tokensCached: 0 };
  for (const line of lines) {
    const event = record(line);
    if (event?.type !== "step_finish") continue;
    const part = record(event.part) ?? event;
    const tokens = record(part.tokens);
    if (!tokens) continue;
    found = true;
    const cache = record(tokens.cache) ?? {};
    total.tokensIn += num(tokens.input) + num(cache.read);
    total.tokensOut += num(tokens.output) + num(tokens.reasoning);
    total.tokensCached += num(cache.read);
    cost += num(part.cost);
  }
  return found ? { ...total, ...(cost > 0 ? { costUsd: cost } : {}) } : null;
};

const READERS: Readonly<Record<string, Reader>> = { codex, claude, gemini, opencode };

/**
 * Usage of one run from its output, by the reader of `agent` (null/unknown: every reader is
 * tried, first match wins). Cost comes from `price` (the project's table for its model: what
 * the operator actually pays, e.g. through a gateway) when there is one, else from the CLI's
 * own figure.
 */
export function harvestUsage(
  output: string,
  agent: string | null | undefined,
  price?: ModelPrice | null,
): HarvestedUsage | null {
  const lines = jsonLines(output);
  const names = agent && READERS[agent] ? [agent] : Object.keys(READERS);
  for (const name of names) {
    const found = READERS[name]?.(lines, output);
    if (!found) continue;
    const usage: HarvestedUsage = { ...found, source: name };
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
