import { describe, expect, it } from "vitest";
import { formatFromExtension, parseStructuredText } from "../src/index.ts";

describe("parseStructuredText", () => {
  it("parses JSON and YAML, ignoring a byte-order mark", () => {
    expect(parseStructuredText('\uFEFF{"a": [1]}', "json")).toEqual({ ok: true, value: { a: [1] } });
    expect(parseStructuredText("a:\n  - 1\n", "yaml")).toEqual({ ok: true, value: { a: [1] } });
    expect(parseStructuredText("", "yaml")).toEqual({ ok: true, value: null });
  });

  it("locates JSON errors whatever V8 says", () => {
    for (const [text, line] of [
      ['{\n  "argv": ["a",\n}\n', 3],
      ['{"a": 1,,}', 1],
      ['{\n"a": 1', 2],
      ["", 1],
    ] as const) {
      const result = parseStructuredText(text, "json");
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.problems[0]?.line, text).toBe(line);
    }
  });

  it("never echoes the input in JSON error messages", () => {
    const result = parseStructuredText('{"token": "hunter2-secret" oops}', "json");
    expect(JSON.stringify(result)).not.toContain("hunter2-secret");
  });

  it("reports YAML errors with positions, without source excerpts", () => {
    const result = parseStructuredText('key: "hunter2-secret\n', "yaml");
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problems[0]?.line).toBeGreaterThan(0);
      expect(JSON.stringify(result)).not.toContain("hunter2-secret");
    }
  });

  it("rejects duplicate keys, several documents and alias bombs", () => {
    expect(parseStructuredText("a: 1\na: 2\n", "yaml").ok).toBe(false);
    expect(parseStructuredText("a: 1\n---\nb: 2\n", "yaml").ok).toBe(false);
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      ...Array.from({ length: 8 }, (_, i) => {
        const prev = String.fromCharCode(97 + i);
        const next = String.fromCharCode(98 + i);
        return `${next}: &${next} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`;
      }),
    ].join("\n");
    expect(parseStructuredText(bomb, "yaml").ok).toBe(false);
  });
});

describe("formatFromExtension", () => {
  it("maps extensions case-insensitively", () => {
    expect(formatFromExtension("a/b.JSON")).toBe("json");
    expect(formatFromExtension("t.yaml")).toBe("yaml");
    expect(formatFromExtension("t.YML")).toBe("yaml");
    expect(formatFromExtension("t.txt")).toBeUndefined();
    expect(formatFromExtension("yaml")).toBeUndefined();
  });
});
