import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeStrictUtf8,
  decodeUtf8,
  findUnsafeText,
  findUnsafeValue,
  nestingDepth,
  REPLACEMENT_CHARACTER,
  sanitizeText,
  sanitizeValue,
} from "../src/index.ts";

/** What Postgres `text`/`jsonb` and UTF-8 can hold: no NUL, no lone surrogate. */
function storable(text: string): boolean {
  return !text.includes("\u0000") && Buffer.from(text, "utf8").toString("utf8") === text;
}

describe("text sanitizer", () => {
  it("finds NUL characters and lone surrogates, and nothing in ordinary text", () => {
    expect(findUnsafeText("a\u0000b")).toContain("NUL character (\\u0000) at index 1");
    expect(findUnsafeText("x\ud800")).toContain("lone UTF-16 surrogate (\\ud800) at index 1");
    expect(findUnsafeText("\udc00y")).toContain("(\\udc00) at index 0");
    expect(findUnsafeText("emoji 😀, accents é, tabs\tand\nlines")).toBeUndefined();
  });

  it("normalises any string into one Postgres and UTF-8 can store, keeping good text unchanged", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        const clean = sanitizeText(text);
        expect(storable(clean)).toBe(true);
        expect(findUnsafeText(clean)).toBeUndefined();
        if (findUnsafeText(text) === undefined) expect(clean).toBe(text);
      }),
      { numRuns: 2000 },
    );
    expect(sanitizeText("a\u0000b\ud800c😀")).toBe(`a${REPLACEMENT_CHARACTER}b${REPLACEMENT_CHARACTER}c😀`);
  });

  it("decodes invalid UTF-8 to replacement characters, or refuses it when strict", () => {
    const bytes = new Uint8Array([0x61, 0xc3, 0x28, 0x00, 0x62]);
    expect(decodeUtf8(bytes)).toBe(`a${REPLACEMENT_CHARACTER}(${REPLACEMENT_CHARACTER}b`);
    expect(decodeStrictUtf8(bytes)).toBeUndefined();
    expect(decodeStrictUtf8(new TextEncoder().encode("é😀"))).toBe("é😀");
  });

  it("finds unsafe strings and keys deep in a value, and sanitises copies", () => {
    const value = { a: [1, { b: "ok" }, { "c\u0000": 2 }], d: "x\ud800" };
    expect(findUnsafeValue(value)?.path).toBe('a[2] key "c\\u0000"');
    expect(findUnsafeValue({ d: ["ok", "x\ud800"] })?.path).toBe("d[1]");
    const clean = sanitizeValue(value);
    expect(findUnsafeValue(clean)).toBeUndefined();
    expect(clean.d).toBe(`x${REPLACEMENT_CHARACTER}`);
    const fine = { a: ["b"] };
    expect(sanitizeValue(fine)).toBe(fine);
  });

  it("walks a value nested 100,000 deep without overflowing the stack", () => {
    let deep: unknown = "x\u0000";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findUnsafeValue(deep)?.problem).toContain("NUL");
  });

  it("measures nesting depth of raw text, ignoring brackets in strings", () => {
    expect(nestingDepth('{"a":"[[[[{{","b":[[{}]]}')).toBe(4);
    expect(nestingDepth('"\\"[["')).toBe(0);
    expect(nestingDepth("[".repeat(20_000))).toBe(20_000);
    expect(nestingDepth("plain")).toBe(0);
  });
});
