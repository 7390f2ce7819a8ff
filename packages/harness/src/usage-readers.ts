/**
 * Per-CLI usage readers, fed one parsed JSON event at a time as the output streams (or as a
 * session file is read), each counting per model call, deduplicated by the CLI's own ids:
 *
 * - codex: `codex exec --json` prints `{"type":"turn.completed","usage":{input_tokens,
 *   cached_input_tokens, output_tokens}}` per turn (summed; one turn may hold many model calls);
 *   its session rollout (`$CODEX_HOME/sessions/…/rollout-*.jsonl`, which the preset keeps in the
 *   run's control dir) has a `{"type":"token_usage_record","payload":{"response_id","usage"}}`
 *   per model call, written as the call ends (summed by response id). Without --json it prints
 *   `tokens used` and a total such as `2,580` (counted as input, the split is unknown);
 * - claude: `claude -p --output-format stream-json` prints an `assistant` event per content block
 *   with the message's `id` and `usage` (per message, the largest figures of its events), and
 *   ends with `{"type":"result","total_cost_usd","usage":{…}}` (the session's totals);
 * - gemini: `--output-format stream-json` ends with `{"type":"result","stats":{total_tokens,
 *   input_tokens, output_tokens, cached…}}` where output_tokens leaves out thinking tokens
 *   (billed as output) that only total_tokens holds; `--output-format json` prints
 *   `{"response","stats":{"models":{NAME:{"tokens":{prompt, candidates, cached, thoughts}}}}}`
 *   (summed over models);
 * - opencode: `opencode run --format json` prints `{"type":"step_finish","part":{"id","tokens":
 *   {input, output, reasoning, cache:{read, write}}, "cost"}}` per step (summed by part id;
 *   `input` excludes the cache reads and writes, which are added to it);
 * - copilot: only a rounded human summary on its output; its session file
 *   `session-state/ID/events.jsonl` (under `COPILOT_HOME`, in the run's control dir) has a
 *   `{"type":"session.usage_record","data":{"usage":{inputTokens, outputTokens, cacheReadTokens,
 *   reasoningTokens}}}` per model call and ends each session with `{"type":"session.shutdown",
 *   "data":{"modelMetrics":{NAME:{"usage":{…}}}}}` (summed over models and sessions; a session
 *   killed before its shutdown counts its calls' records).
 *
 * Never lowered by a line the agent prints: the agent can write lines into the CLI's output or
 * files (a tool's process may hold the same descriptors), so every figure is the largest of what
 * was reported for the same id, totals are taken with the per-call sums field by field (the
 * larger wins), and no reader takes "the last line". An echoed line can inflate a count, never
 * hide spend already reported.
 */

export interface Tokens {
  tokensIn: number;
  tokensOut: number;
  tokensCached: number;
}

/** What a reader found: tokens, the CLI's own cost when it reported one, and where it was read. */
export interface ReaderTotal extends Tokens {
  costUsd?: number;
  source: string;
}

/** A reader's state for one run: `add` each event in order, `total` at any time. */
export interface UsageReader {
  add(event: Record<string, unknown>): void;
  /** A non-JSON line of the output (codex's human summary). */
  text?(line: string): void;
  total(): ReaderTotal | null;
}

export function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

export function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

export function noTokens(): Tokens {
  return { tokensIn: 0, tokensOut: 0, tokensCached: 0 };
}

export function addTokens(to: Tokens, from: Tokens): void {
  to.tokensIn += from.tokensIn;
  to.tokensOut += from.tokensOut;
  to.tokensCached += from.tokensCached;
}

/** Field by field, the larger of two reports of the same spend. */
export function maxTokens(a: Tokens, b: Tokens): Tokens {
  return {
    tokensIn: Math.max(a.tokensIn, b.tokensIn),
    tokensOut: Math.max(a.tokensOut, b.tokensOut),
    tokensCached: Math.max(a.tokensCached, b.tokensCached),
  };
}

/**
 * Per-call usage deduplicated by the CLI's id for the call: a call reported twice (or echoed by
 * the agent with other numbers) counts once, at its largest figures; calls without an id are summed.
 */
class CallLedger {
  readonly #byId = new Map<string, Tokens>();
  readonly #anonymous = noTokens();
  seen = false;

  add(id: unknown, tokens: Tokens): void {
    this.seen = true;
    if (typeof id !== "string" || id.length === 0) {
      addTokens(this.#anonymous, tokens);
      return;
    }
    const known = this.#byId.get(id);
    this.#byId.set(id, known ? maxTokens(known, tokens) : tokens);
  }

  sum(): Tokens {
    const total = { ...this.#anonymous };
    for (const tokens of this.#byId.values()) addTokens(total, tokens);
    return total;
  }
}

function codexTokens(usage: Record<string, unknown>): Tokens {
  return {
    tokensIn: num(usage.input_tokens),
    tokensOut: num(usage.output_tokens),
    tokensCached: num(usage.cached_input_tokens),
  };
}

function humanCount(text: string): number {
  const value = Number(text.replace(/[,.]/g, ""));
  return Number.isFinite(value) ? value : 0;
}

function codexReader(): UsageReader {
  const turns = new CallLedger();
  const calls = new CallLedger();
  let human = 0;
  let awaiting = false;
  return {
    add(event) {
      if (event.type === "turn.completed") {
        const usage = record(event.usage);
        if (usage) turns.add(null, codexTokens(usage));
      } else if (event.type === "token_usage_record") {
        const payload = record(event.payload);
        const usage = record(payload?.usage);
        if (payload && usage) calls.add(payload.response_id, codexTokens(usage));
      }
    },
    text(line) {
      // Human output: "tokens used: 2,580", or "tokens used" with the number on the next line.
      const inline = /tokens used:?\s*(\d[\d,.]*)/i.exec(line);
      if (inline) human = Math.max(human, humanCount(inline[1] as string));
      else if (awaiting) {
        const alone = /^\s*(\d[\d,.]*)\s*$/.exec(line);
        if (alone) human = Math.max(human, humanCount(alone[1] as string));
      }
      awaiting = !inline && /tokens used/i.test(line);
    },
    total() {
      if (calls.seen || turns.seen) {
        return {
          ...maxTokens(turns.sum(), calls.sum()),
          source: calls.seen ? "codex session rollout token_usage_record" : "codex --json turn.completed",
        };
      }
      return human > 0
        ? { tokensIn: human, tokensOut: 0, tokensCached: 0, source: "codex 'tokens used' line" }
        : null;
    },
  };
}

function claudeTokens(usage: Record<string, unknown>): Tokens {
  const cacheRead = num(usage.cache_read_input_tokens);
  return {
    tokensIn: num(usage.input_tokens) + cacheRead + num(usage.cache_creation_input_tokens),
    tokensOut: num(usage.output_tokens),
    tokensCached: cacheRead,
  };
}

function claudeReader(): UsageReader {
  const messages = new CallLedger();
  let result: Tokens | null = null;
  let cost: number | null = null;
  return {
    add(event) {
      if (event.type === "assistant") {
        const message = record(event.message);
        const usage = record(message?.usage);
        if (message && usage) messages.add(message.id, claudeTokens(usage));
      } else if (event.type === "result") {
        const usage = record(event.usage);
        if (!usage) return;
        const tokens = claudeTokens(usage);
        result = result ? maxTokens(result, tokens) : tokens;
        if (typeof event.total_cost_usd === "number" && num(event.total_cost_usd) === event.total_cost_usd)
          cost = Math.max(cost ?? 0, event.total_cost_usd);
      }
    },
    total() {
      if (!result && !messages.seen) return null;
      const tokens = result ? maxTokens(result, messages.sum()) : messages.sum();
      return {
        ...tokens,
        source: result ? "claude stream-json result" : "claude stream-json assistant messages",
        ...(cost !== null ? { costUsd: cost } : {}),
      };
    },
  };
}

function geminiReader(): UsageReader {
  let found: ReaderTotal | null = null;
  const keep = (tokens: Tokens, source: string) => {
    found = found ? { ...maxTokens(found, tokens), source: found.source } : { ...tokens, source };
  };
  return {
    add(event) {
      const stats = record(event.stats);
      if (!stats) return;
      if (event.type === "result") {
        // stream-json: input_tokens is the whole prompt, cached included; total_tokens (the API's
        // totalTokenCount) adds the thinking tokens to input and output.
        const tokensIn = num(stats.input_tokens);
        keep(
          {
            tokensIn,
            tokensOut: Math.max(num(stats.output_tokens), num(stats.total_tokens) - tokensIn),
            tokensCached: num(stats.cached),
          },
          "gemini stream-json result",
        );
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
        keep(total, "gemini json stats");
      }
    },
    total: () => found,
  };
}

function opencodeReader(): UsageReader {
  const steps = new CallLedger();
  const costs = new Map<string, number>();
  let anonymousCost = 0;
  return {
    add(event) {
      if (event.type !== "step_finish") return;
      const part = record(event.part) ?? event;
      const tokens = record(part.tokens);
      if (!tokens) return;
      const cache = record(tokens.cache) ?? {};
      const id = typeof part.id === "string" && part.id.length > 0 ? part.id : null;
      steps.add(id, {
        tokensIn: num(tokens.input) + num(cache.read) + num(cache.write),
        tokensOut: num(tokens.output) + num(tokens.reasoning),
        tokensCached: num(cache.read),
      });
      if (id === null) anonymousCost += num(part.cost);
      else costs.set(id, Math.max(costs.get(id) ?? 0, num(part.cost)));
    },
    total() {
      if (!steps.seen) return null;
      const cost = [...costs.values()].reduce((sum, c) => sum + c, anonymousCost);
      return {
        ...steps.sum(),
        source: "opencode --format json step_finish",
        ...(cost > 0 ? { costUsd: cost } : {}),
      };
    },
  };
}

/** Tokens of one Copilot usage object ({inputTokens, outputTokens, reasoningTokens, cacheReadTokens}). */
function copilotTokens(usage: Record<string, unknown>): Tokens {
  // inputTokens is the whole prompt, cache reads and writes included.
  return {
    tokensIn: num(usage.inputTokens),
    tokensOut: num(usage.outputTokens) + num(usage.reasoningTokens),
    tokensCached: num(usage.cacheReadTokens),
  };
}

function copilotReader(): UsageReader {
  let found = false;
  const total = noTokens();
  // Per-call records of the session segment not yet closed by a shutdown: a run killed before
  // Copilot wrote its shutdown (SIGKILL after the grace period) still counts its calls.
  let calls = noTokens();
  const closeSegment = (shutdown: Tokens | null) => {
    // The larger of the shutdown's totals and the calls' sum, field by field.
    addTokens(total, maxTokens(calls, shutdown ?? noTokens()));
    calls = noTokens();
  };
  return {
    add(event) {
      if (event.type === "session.start") closeSegment(null);
      if (event.type === "session.usage_record") {
        const usage = record(record(event.data)?.usage);
        if (!usage) return;
        found = true;
        addTokens(calls, copilotTokens(usage));
        return;
      }
      if (event.type !== "session.shutdown") return;
      const models = record(record(event.data)?.modelMetrics);
      if (!models) return;
      found = true;
      const shutdown = noTokens();
      for (const metrics of Object.values(models))
        addTokens(shutdown, copilotTokens(record(record(metrics)?.usage) ?? {}));
      closeSegment(shutdown);
    },
    total() {
      if (!found) return null;
      const sum = { ...total };
      addTokens(sum, calls);
      return { ...sum, source: "copilot session-state events.jsonl" };
    },
  };
}

/** The reader of each agent kind (runner config `agent`). */
export const READERS: Readonly<Record<string, () => UsageReader>> = {
  codex: codexReader,
  claude: claudeReader,
  gemini: geminiReader,
  opencode: opencodeReader,
  copilot: copilotReader,
};
