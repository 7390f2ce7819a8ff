/**
 * Budgets (docs/runner-config.md): a project pauses once its spend reaches `budget_usd` (dollars
 * of priced usage) or `budget_tokens` (input + output tokens of all usage, priced or not, so a
 * model no price covers can still be bounded).
 */

export interface Spend {
  readonly costUsd: number;
  readonly tokensIn: number;
  readonly tokensOut: number;
  /** Tokens no price covered (part of tokensIn + tokensOut). */
  readonly tokensUnpriced: number;
}

export interface Budgets {
  readonly budgetUsd: number | null;
  readonly budgetTokens: number | null;
}

/** Why the spend reached a budget (the pause's reason), or null while it is under both. */
export function budgetReached(spend: Spend, budgets: Budgets): string | null {
  const tokens = spend.tokensIn + spend.tokensOut;
  if (budgets.budgetUsd !== null && spend.costUsd >= budgets.budgetUsd) {
    return `budget_usd ${budgets.budgetUsd} reached (spent ${formatUsd(spend.costUsd)})`;
  }
  if (budgets.budgetTokens !== null && tokens >= budgets.budgetTokens) {
    return `budget_tokens ${budgets.budgetTokens} reached (${tokens} tokens used)`;
  }
  return null;
}

/** Dollars for people: 2 decimals from $1, 4 below (never float noise such as 0.009084000000000002). */
export function formatUsd(usd: number): string {
  return `$${usd.toFixed(Math.abs(usd) >= 1 ? 2 : 4)}`;
}

/**
 * A spend for people: its dollars, and its unpriced tokens said as such, never as `$0.00`:
 * "$0.2500", "unpriced (1,241 tokens)", "$0.2500 + unpriced (1,241 tokens)".
 */
export function formatSpend(costUsd: number, tokensUnpriced: number): string {
  if (tokensUnpriced <= 0) return formatUsd(costUsd);
  const unpriced = `unpriced (${tokensUnpriced.toLocaleString("en-US")} tokens)`;
  return costUsd > 0 ? `${formatUsd(costUsd)} + ${unpriced}` : unpriced;
}

/** A stored cost for an API answer: exact to a millionth of a dollar, without float noise. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1_000_000) / 1_000_000;
}
