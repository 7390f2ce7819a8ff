import type { AgentKind } from "./agent-kinds.ts";

/** USD per million tokens of one model. */
export interface TokenPrice {
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
  cached_input_usd_per_mtok?: number;
}

/**
 * Overseer's price table: the presets' default models (and their close kin), USD per million
 * tokens, list prices of the vendors' public APIs at standard (non-batch) rates.
 *
 * Date: 2026-12-01 ({@link PRICE_TABLE_DATE}), entered from the list prices the vendors publish
 * for these models. Source (re-check there when updating): https://openai.com/api/pricing,
 * https://docs.anthropic.com/en/docs/about-claude/pricing, https://ai.google.dev/pricing.
 * Simplifications, all towards the higher figure: Claude's cache writes (billed 1.25x input) are
 * counted at the input rate but the CLI's own cost figure is taken when larger; Gemini 2.5 Pro
 * is priced at its prompts-up-to-200k-tokens tier.
 *
 * A project's runner config `prices` overrides any entry (what the operator actually pays, e.g.
 * through a gateway or with a discount); a model in neither is unpriced (its usage is shown as
 * such, never as $0, and `budget_usd` cannot see it; `budget_tokens` can).
 */
export const PRICE_TABLE_DATE = "2026-12-01";

export const PRICE_TABLE: Readonly<Record<string, TokenPrice>> = {
  "gpt-5-codex": { input_usd_per_mtok: 1.25, cached_input_usd_per_mtok: 0.125, output_usd_per_mtok: 10 },
  "gpt-5": { input_usd_per_mtok: 1.25, cached_input_usd_per_mtok: 0.125, output_usd_per_mtok: 10 },
  "gpt-5-mini": { input_usd_per_mtok: 0.25, cached_input_usd_per_mtok: 0.025, output_usd_per_mtok: 2 },
  "claude-sonnet-4-5": { input_usd_per_mtok: 3, cached_input_usd_per_mtok: 0.3, output_usd_per_mtok: 15 },
  "claude-opus-4-1": { input_usd_per_mtok: 15, cached_input_usd_per_mtok: 1.5, output_usd_per_mtok: 75 },
  "claude-haiku-4-5": { input_usd_per_mtok: 1, cached_input_usd_per_mtok: 0.1, output_usd_per_mtok: 5 },
  "gemini-2.5-pro": { input_usd_per_mtok: 1.25, cached_input_usd_per_mtok: 0.31, output_usd_per_mtok: 10 },
};

/**
 * CLIs whose tokens the table cannot price: Copilot bills a subscription's premium requests,
 * not tokens, so its usage stays unpriced unless the project names a price.
 */
const NOT_TOKEN_BILLED: ReadonlySet<string> = new Set<AgentKind>(["copilot"]);

/** Where a run's price comes from: the project's own `prices`, the table, or nowhere (unpriced). */
export type ResolvedPrice = (TokenPrice & { source: "project" | "table" }) | null;

/** The price of `model` for a project: its runner config's `prices` entry first, then the table. */
export function resolvePrice(config: {
  agent: string | null;
  model: string | null;
  prices: Readonly<Record<string, TokenPrice>>;
}): ResolvedPrice {
  if (config.model === null) return null;
  const own = config.prices[config.model];
  if (own) return { ...own, source: "project" };
  if (config.agent !== null && NOT_TOKEN_BILLED.has(config.agent)) return null;
  const table = PRICE_TABLE[config.model];
  return table ? { ...table, source: "table" } : null;
}

/** CLIs that print a cost of their own (usage-readers.ts in @overseer/harness). */
const REPORTS_COST: ReadonlySet<string> = new Set<AgentKind>(["claude", "opencode"]);

/**
 * Why `budget_usd` cannot trigger for a project, or null: a budget is set but nothing prices
 * its model (no `prices` entry, not in the price table, a CLI that reports no cost), so its
 * spend stays unpriced. Said at `init`, by `doctor` and on the dashboard.
 */
export function unpricedBudgetWarning(
  config: {
    agent: string | null;
    model: string | null;
    prices: Readonly<Record<string, TokenPrice>>;
    budget_usd: number | null;
  },
  budgetUsd: number | null = config.budget_usd,
): string | null {
  if (budgetUsd === null || config.agent === null || REPORTS_COST.has(config.agent)) return null;
  if (resolvePrice(config) !== null) return null;
  const model = config.model === null ? "its model (no `model` set)" : `model "${config.model}"`;
  return `budget_usd ${budgetUsd} can never be reached: nothing prices ${model} (${config.agent} reports no cost, the price table of ${PRICE_TABLE_DATE} has no entry). Fix: add "prices": {"${config.model ?? "MODEL"}": {"input_usd_per_mtok": …, "output_usd_per_mtok": …}} to the runner config, or set "budget_tokens".`;
}
