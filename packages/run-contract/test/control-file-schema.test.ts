import { describe, expect, it } from "vitest";
import { CONTROL_LIMITS, parseControlTransition } from "../src/index.ts";

describe("parseControlTransition", () => {
  it("accepts each kind and fills defaults", () => {
    expect(parseControlTransition({ version: 1, kind: "submit", message: "Add x", summary: "s" })).toEqual({
      ok: true,
      transition: { version: 1, kind: "submit", message: "Add x", summary: "s" },
    });
    expect(parseControlTransition({ version: 1, kind: "approve" })).toEqual({
      ok: true,
      transition: { version: 1, kind: "approve" },
    });
    expect(
      parseControlTransition({
        version: 1,
        kind: "reject",
        feedback: "no tests",
        usage: { tokens_in: 5, cost_usd: 0.1 },
      }),
    ).toEqual({
      ok: true,
      transition: {
        version: 1,
        kind: "reject",
        feedback: "no tests",
        usage: { tokens_in: 5, cost_usd: 0.1 },
      },
    });
    expect(parseControlTransition({ version: 1, kind: "escalate", reason: "flaky CI" })).toEqual({
      ok: true,
      transition: {
        version: 1,
        kind: "escalate",
        reason: "flaky CI",
        needs_user: false,
        options: [],
      },
    });
  });

  it("normalises option ids, keeps the first of colliding ids and requires a note for custom", () => {
    const result = parseControlTransition({
      version: 1,
      kind: "escalate",
      reason: "which provider?",
      needs_user: true,
      category: "payment",
      question: "Which payment provider?",
      options: [
        { id: "Use Stripe!", label: "Stripe" },
        { id: "use_stripe", label: "Duplicate" },
        { id: "CUSTOM", label: "Something else" },
        { id: "!!!", label: "Odd", description: "d" },
      ],
    });
    expect(result).toEqual({
      ok: true,
      transition: expect.objectContaining({
        needs_user: true,
        options: [
          { id: "use_stripe", label: "Stripe", requires_note: false },
          { id: "custom", label: "Something else", requires_note: true },
          { id: "option", label: "Odd", description: "d", requires_note: false },
        ],
      }),
    });
  });

  it("gives output that is itself a valid control file: the run result carries it with the same schema", () => {
    const inputs: unknown[] = [
      { version: 1, kind: "submit", message: "Add x", summary: "s", usage: { tokens_in: 3, cost_usd: 0.5 } },
      { version: 1, kind: "approve" },
      { version: 1, kind: "reject", feedback: "redo" },
      { version: 1, kind: "escalate", reason: "flaky CI" },
      {
        version: 1,
        kind: "escalate",
        reason: "which?",
        needs_user: true,
        category: "payment",
        question: "Which provider?",
        options: [
          { id: "Use Stripe!", label: "Stripe" },
          { id: "custom", label: "Other" },
        ],
      },
    ];
    for (const input of inputs) {
      const once = parseControlTransition(input);
      if (!once.ok) throw new Error(once.error);
      expect(parseControlTransition(once.transition)).toEqual(once);
    }
  });

  it("names the field, the expectation and what was received", () => {
    const cases: [unknown, RegExp][] = [
      [[], /expected a JSON object, received \[\]/],
      [{ version: 2, kind: "submit" }, /version: expected 1, received 2 /],
      [
        { version: 1, kind: "merge" },
        /kind: expected one of submit\|approve\|reject\|escalate\|plan\|complete, received "merge"/,
      ],
      [{ version: 1, kind: "submit" }, /message: expected a string, received nothing \(missing\)/],
      [{ version: 1, kind: "submit", message: "  \n" }, /message: expected non-empty text/],
      [{ version: 1, kind: "submit", message: 42 }, /message: expected a string, received 42/],
      [{ version: 1, kind: "reject" }, /feedback: expected a string/],
      [
        { version: 1, kind: "approve", feedbak: "x" },
        /feedbak: expected no such field .*\(remove it or fix its spelling\)/,
      ],
      [{ version: 1, kind: "escalate", reason: "r", needs_user: true }, /question: expected a question/],
      [
        { version: 1, kind: "escalate", reason: "r", question: "q?" },
        /needs_user: expected needs_user: true/,
      ],
      [
        { version: 1, kind: "escalate", reason: "r", needs_user: true, question: "q", category: "money" },
        /category: expected one of .*received "money"/,
      ],
      [
        { version: 1, kind: "approve", usage: { tokens_in: -1 } },
        /usage.tokens_in: expected a number >= 0, received -1/,
      ],
      [
        { version: 1, kind: "submit", message: "x".repeat(CONTROL_LIMITS.messageBytes + 1) },
        /message: expected at most 65536 bytes \(UTF-8\), received 65537 bytes/,
      ],
    ];
    for (const [input, pattern] of cases) {
      const result = parseControlTransition(input);
      expect(result.ok, JSON.stringify(input).slice(0, 80)).toBe(false);
      if (!result.ok) expect(result.error).toMatch(pattern);
    }
  });

  it("refuses more than 8 options", () => {
    const options = Array.from({ length: 9 }, (_, i) => ({ id: `o${i}`, label: `O${i}` }));
    const result = parseControlTransition({
      version: 1,
      kind: "escalate",
      reason: "r",
      needs_user: true,
      question: "q",
      options,
    });
    expect(result.ok).toBe(false);
  });
});
