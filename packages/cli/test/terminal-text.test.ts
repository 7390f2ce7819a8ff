import { describe, expect, it } from "vitest";
import { terminalSafe } from "../src/terminal-text.ts";

describe("terminalSafe", () => {
  it("shows C0, DEL, C1 and bidi controls as visible escapes, keeping newlines, tabs and other text", () => {
    expect(terminalSafe("a\tb\nc")).toBe("a\tb\nc");
    expect(terminalSafe("\u001b[31mred\u001b[0m")).toBe("\\x1b[31mred\\x1b[0m");
    expect(terminalSafe("\u0000\u0007\r\u007f\u0085\u009b")).toBe("\\x00\\x07\\x0d\\x7f\\x85\\x9b");
    expect(terminalSafe("abc\u202edef\u2066")).toBe("abc\\u{202e}def\\u{2066}");
    expect(terminalSafe("café ✓ 日本 🚀 $0.0091")).toBe("café ✓ 日本 🚀 $0.0091");
  });
});
