import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  describeReceived,
  expectedErrorMap,
  formatIssuePath,
  formatZodIssues,
  suggestKey,
  zodIssuesToConfigIssues,
} from "../src/zod-issue-formatter.ts";

describe("describeReceived", () => {
  it("distinguishes types and marks missing values", () => {
    expect(describeReceived(undefined)).toBe("nothing (missing)");
    expect(describeReceived(null)).toBe("null");
    expect(describeReceived("")).toBe('"" (empty string)');
    expect(describeReceived("123")).toBe('"123"');
    expect(describeReceived(123)).toBe("123");
    expect(describeReceived(["a", 1])).toBe('["a",1]');
  });

  it("truncates long values and redacts token shapes", () => {
    expect(describeReceived("x".repeat(500)).length).toBeLessThan(100);
    expect(describeReceived("Bearer abcdefghijklmnop")).not.toContain("abcdefghijklmnop");
  });

  it("shows only the type of a secret", () => {
    expect(describeReceived("hunter2-long", { secret: true })).toBe("a string (secret, hidden)");
    expect(describeReceived({ a: 1 }, { secret: true })).toBe("an object (secret, hidden)");
  });
});

describe("formatIssuePath", () => {
  it("uses dots for identifiers, brackets for indexes and other keys", () => {
    expect(formatIssuePath([])).toBe("");
    expect(formatIssuePath(["argv", 0])).toBe("argv[0]");
    expect(formatIssuePath(["hooks", "setup", "argv"])).toBe("hooks.setup.argv");
    expect(formatIssuePath(["files", ".env", "content"])).toBe('files[".env"].content');
    expect(formatIssuePath(["commands_by_role", "ci-cd", 1])).toBe('commands_by_role["ci-cd"][1]');
  });
});

describe("suggestKey", () => {
  it("suggests close known keys only", () => {
    expect(suggestKey("timeout_second", ["timeout_seconds", "attempts"])).toBe("timeout_seconds");
    expect(suggestKey("ARGV", ["argv"])).toBe("argv");
    expect(suggestKey("completely_different", ["argv"])).toBeUndefined();
  });
});

describe("expectedErrorMap + zodIssuesToConfigIssues", () => {
  it("phrases generic zod failures as expectations", () => {
    const schema = z.strictObject({
      n: z.number().min(2),
      s: z.string().min(1),
      list: z.array(z.string()).max(1),
      e: z.enum(["a", "b"]),
      r: z.string().regex(/^x+$/),
    });
    const input = { n: 1, s: "", list: ["a", "b"], e: "c", r: "y", extra: true };
    const result = schema.safeParse(input, { error: expectedErrorMap });
    expect(result.success).toBe(false);
    const issues = zodIssuesToConfigIssues(result.error?.issues ?? [], input);
    expect(issues.map((i) => [i.path, i.expected, i.received])).toEqual([
      ["n", "a number >= 2", "1"],
      ["s", "a non-empty string", '"" (empty string)'],
      ["list", "a list with at most 1 item", '["a","b"]'],
      ["e", 'one of "a", "b"', '"c"'],
      ["r", "a string matching /^x+$/", '"y"'],
      ["extra", "one of the known keys: e, list, n, r, s", "an unknown key"],
    ]);
  });
});

describe("formatZodIssues", () => {
  const schema = z.strictObject({
    name: z.string(),
    count: z.number().int().min(1),
    note: z.string().optional(),
  });

  it("reads the same for issues parsed without expectedErrorMap (zod's own messages are replaced)", () => {
    const input = { count: 0, nme: "x" };
    const result = schema.safeParse(input);
    expect(formatZodIssues(result.error?.issues ?? [], input)).toBe(
      [
        "name: expected a string, received nothing (missing)",
        "count: expected a number >= 1, received 0",
        "nme: expected no such field (unknown fields are refused), received an unknown key (remove it or fix its spelling)",
      ].join("; "),
    );
  });

  it("keeps a schema's own message, splitting a received half it already states", () => {
    const own = z.object({
      text: z
        .string()
        .refine((t) => t.length < 3, { error: "expected at most 2 characters, received too many" }),
    });
    const input = { text: "long" };
    expect(formatZodIssues(own.safeParse(input).error?.issues ?? [], input)).toBe(
      "text: expected at most 2 characters, received too many",
    );
    expect(formatZodIssues(z.string().safeParse(5).error?.issues ?? [], 5, { rootName: "(body)" })).toBe(
      "(body): expected a string, received 5",
    );
  });
});
