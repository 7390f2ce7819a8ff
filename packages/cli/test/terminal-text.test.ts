import { describe, expect, it } from "vitest";
import { wantsColor } from "../src/cli-io.ts";
import { terminalSafe, terminalStyledSafe } from "../src/terminal-text.ts";

describe("terminalSafe", () => {
  it("shows C0, DEL, C1 and bidi controls as visible escapes, keeping newlines, tabs and other text", () => {
    expect(terminalSafe("a\tb\nc")).toBe("a\tb\nc");
    expect(terminalSafe("\u001b[31mred\u001b[0m")).toBe("\\x1b[31mred\\x1b[0m");
    expect(terminalSafe("\u0000\u0007\r\u007f\u0085\u009b")).toBe("\\x00\\x07\\x0d\\x7f\\x85\\x9b");
    expect(terminalSafe("abc\u202edef\u2066")).toBe("abc\\u{202e}def\\u{2066}");
    expect(terminalSafe("café ✓ 日本 🚀 $0.0091")).toBe("café ✓ 日本 🚀 $0.0091");
  });
});

describe("terminalStyledSafe", () => {
  it("keeps the renderer's colour codes and escapes every other control", () => {
    expect(terminalStyledSafe("\u001b[36massistant: hi\u001b[0m")).toBe("\u001b[36massistant: hi\u001b[0m");
    expect(terminalStyledSafe("\u001b[2m\u001b[2J\u001b[8mhidden\u001b[0m")).toBe(
      "\u001b[2m\\x1b[2J\\x1b[8mhidden\u001b[0m",
    );
  });
});

describe("wantsColor", () => {
  it("colours a TTY unless NO_COLOR or TERM=dumb; FORCE_COLOR decides; piped output stays plain", () => {
    expect(wantsColor(true, {})).toBe(true);
    expect(wantsColor(false, {})).toBe(false);
    expect(wantsColor(true, { NO_COLOR: "1" })).toBe(false);
    expect(wantsColor(true, { NO_COLOR: "" })).toBe(false);
    expect(wantsColor(true, { TERM: "dumb" })).toBe(false);
    expect(wantsColor(false, { FORCE_COLOR: "1" })).toBe(true);
    expect(wantsColor(true, { FORCE_COLOR: "0" })).toBe(false);
    expect(wantsColor(false, { FORCE_COLOR: "0" })).toBe(false);
  });
});
