import { describe, expect, it } from "vitest";
import { budgetReached, formatSpend, formatUsd, roundUsd } from "../src/budget.ts";

const spend = (costUsd: number, tokensIn: number, tokensOut: number, tokensUnpriced = 0) => ({
  costUsd,
  tokensIn,
  tokensOut,
  tokensUnpriced,
});
const none = { budgetUsd: null, budgetTokens: null };

describe("budgets", () => {
  it("budget_usd pauses at its spend, budget_tokens at its tokens (in + out, priced or not)", () => {
    expect(budgetReached(spend(0.99, 10, 10), { ...none, budgetUsd: 1 })).toBeNull();
    expect(budgetReached(spend(1, 10, 10), { ...none, budgetUsd: 1 })).toBe(
      "budget_usd 1 reached (spent $1.00)",
    );
    expect(
      budgetReached(spend(0, 900_000, 99_999, 999_999), { ...none, budgetTokens: 1_000_000 }),
    ).toBeNull();
    expect(budgetReached(spend(0, 900_000, 100_000, 1_000_000), { ...none, budgetTokens: 1_000_000 })).toBe(
      "budget_tokens 1000000 reached (1000000 tokens used)",
    );
    expect(budgetReached(spend(5, 5, 5), none)).toBeNull();
  });

  it("an unpriced spend cannot reach budget_usd, only budget_tokens", () => {
    const unpriced = spend(0, 1_600_000, 20_000, 1_620_000);
    expect(budgetReached(unpriced, { budgetUsd: 1, budgetTokens: null })).toBeNull();
    expect(budgetReached(unpriced, { budgetUsd: 1, budgetTokens: 1_000_000 })).toMatch(/^budget_tokens/);
  });
});

describe("costs for display", () => {
  it("rounds for people and for the API, never float noise", () => {
    expect(formatUsd(0.009084000000000002)).toBe("$0.0091");
    expect(formatUsd(12.3456)).toBe("$12.35");
    expect(roundUsd(0.009084000000000002)).toBe(0.009084);
  });

  it("says unpriced, never $0.00", () => {
    expect(formatSpend(0, 1_241)).toBe("unpriced (1,241 tokens)");
    expect(formatSpend(0.25, 1_241)).toBe("$0.2500 + unpriced (1,241 tokens)");
    expect(formatSpend(0, 0)).toBe("$0.0000");
  });
});
