import {
  maxTokens,
  READERS,
  type ReaderTotal,
  record,
  type Tokens,
  type UsageReader,
} from "./usage-readers.ts";

/**
 * Token usage and cost of one run, counted as its output streams (usage-readers.ts names what
 * each CLI reports), so a run stopped at any point (linger, stall, timeout, cancel, a killed
 * worker between two reports) keeps what it spent; the CLI's session files are read as
 * snapshots whenever the worker looks (each snapshot can only raise the count).
 */

export interface HarvestedUsage extends Tokens {
  /** Present when the usage is priced: the price table's figure, or the CLI's own. */
  costUsd?: number;
  /** Where it was read: the CLI and its stream or file (`codex --json turn.completed`…). */
  source: string;
}

/** USD per million tokens, for CLIs that report no cost. */
export interface ModelPrice {
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
  cached_input_usd_per_mtok?: number;
  /**
   * `project`: the project's own `prices` (what the operator pays, e.g. through a gateway), which
   * replaces the CLI's figure; `table`: Overseer's price table, whose figure and the CLI's own
   * are taken the larger. Default project.
   */
  source?: "project" | "table";
}

/** Longest output line (or pretty-printed object) parsed as an event; longer ones are skipped. */
const MAX_EVENT_CHARS = 1024 * 1024;

export class UsageMeter {
  readonly #names: readonly string[];
  readonly #stream = new Map<string, UsageReader>();
  readonly #files = new Map<string, ReaderTotal>();
  #pending = "";
  #skipping = false;
  #block: string[] | null = null;
  #blockChars = 0;

  /** `agent`: the runner config's (null or unknown: every reader is tried, first match wins). */
  constructor(agent: string | null | undefined) {
    this.#names = agent && READERS[agent] ? [agent] : Object.keys(READERS);
    for (const name of this.#names) this.#stream.set(name, (READERS[name] as () => UsageReader)());
  }

  /** Output as it arrives, in any pieces. */
  write(chunk: string): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf("\n", start);
      if (newline < 0) break;
      this.#take(chunk.slice(start, newline));
      start = newline + 1;
    }
    const rest = chunk.slice(start);
    if (this.#skipping || rest.length === 0) return;
    if (this.#pending.length + rest.length > MAX_EVENT_CHARS) {
      this.#pending = "";
      this.#skipping = true;
      return;
    }
    this.#pending += rest;
  }

  /** The output ended: its last line counts even without a newline. */
  end(): void {
    this.write("\n");
  }

  /** The CLI's session files as they are now (their whole text); they only ever raise the count. */
  readFiles(texts: readonly string[]): void {
    if (texts.length === 0) return;
    for (const name of this.#names) {
      const reader = (READERS[name] as () => UsageReader)();
      for (const text of texts) for (const event of jsonEvents(text)) reader.add(event);
      const found = reader.total();
      if (found) this.#files.set(name, larger(this.#files.get(name) ?? null, found) ?? found);
    }
  }

  /** What the CLI reported so far, without cost; null when nothing. */
  totals(): ReaderTotal | null {
    for (const name of this.#names) {
      const found = larger(this.#stream.get(name)?.total() ?? null, this.#files.get(name) ?? null);
      if (found) return found;
    }
    return null;
  }

  /**
   * The usage so far, priced by `price` when there is one (see {@link ModelPrice.source}), else
   * by the CLI's own figure; no `costUsd` when neither prices it.
   */
  usage(price?: ModelPrice | null): HarvestedUsage | null {
    const found = this.totals();
    if (!found) return null;
    const { costUsd, ...usage } = found;
    if (price) {
      const table = costOf(usage, price);
      return { ...usage, costUsd: price.source === "table" ? Math.max(table, costUsd ?? 0) : table };
    }
    // A CLI's $0 for tokens it spent is no price (an echoed result line, say): unpriced.
    const priced = costUsd !== undefined && (costUsd > 0 || usage.tokensIn + usage.tokensOut === 0);
    return priced ? { ...usage, costUsd } : usage;
  }

  #take(line: string): void {
    const whole = this.#skipping ? null : this.#pending + line;
    this.#pending = "";
    this.#skipping = false;
    if (whole === null || whole.length > MAX_EVENT_CHARS) return;
    if (this.#block) {
      this.#blockChars += whole.length;
      if (this.#blockChars > MAX_EVENT_CHARS) {
        this.#block = null;
        return;
      }
      this.#block.push(whole);
      if (whole.trimEnd() === "}") {
        const text = this.#block.join("\n");
        this.#block = null;
        this.#event(text);
      }
      return;
    }
    if (whole.trimEnd() === "{") {
      this.#block = [whole];
      this.#blockChars = whole.length;
      return;
    }
    const trimmed = whole.trim();
    if (trimmed.startsWith("{") && trimmed.endsWith("}")) this.#event(trimmed);
    else for (const reader of this.#stream.values()) reader.text?.(whole);
  }

  #event(text: string): void {
    const event = parseEvent(text);
    if (event) for (const reader of this.#stream.values()) reader.add(event);
  }
}

/** Field by field the larger of two reports of one run's spend (either may be missing). */
function larger(a: ReaderTotal | null, b: ReaderTotal | null): ReaderTotal | null {
  if (!a || !b) return a ?? b;
  const cost = Math.max(a.costUsd ?? -1, b.costUsd ?? -1);
  const source = b.tokensIn + b.tokensOut >= a.tokensIn + a.tokensOut ? b.source : a.source;
  return { ...maxTokens(a, b), source, ...(cost >= 0 ? { costUsd: cost } : {}) };
}

function parseEvent(text: string): Record<string, unknown> | null {
  try {
    return record(JSON.parse(text));
  } catch {
    return null;
  }
}

/** JSON objects of a whole text: its JSON lines and pretty-printed `{` … `}` blocks. */
function* jsonEvents(text: string): Generator<Record<string, unknown>> {
  let block: string[] | null = null;
  for (const line of text.split("\n")) {
    if (block) {
      block.push(line);
      if (line.trimEnd() === "}") {
        const event = parseEvent(block.join("\n"));
        block = null;
        if (event) yield event;
      }
      continue;
    }
    if (line.trimEnd() === "{") {
      block = [line];
      continue;
    }
    const trimmed = line.trim();
    if (trimmed.startsWith("{") && trimmed.endsWith("}")) {
      const event = parseEvent(trimmed);
      if (event) yield event;
    }
  }
}

/** Cost of `usage` at `price`: cached input at its own rate (input rate when unset). */
export function costOf(usage: Tokens, price: ModelPrice): number {
  const cachedRate = price.cached_input_usd_per_mtok ?? price.input_usd_per_mtok;
  const fresh = Math.max(0, usage.tokensIn - usage.tokensCached);
  return (
    (fresh * price.input_usd_per_mtok +
      usage.tokensCached * cachedRate +
      usage.tokensOut * price.output_usd_per_mtok) /
    1_000_000
  );
}
