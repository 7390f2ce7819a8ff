import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildCommitMessage, GitInputError } from "../src/index.ts";

describe("buildCommitMessage", () => {
  it("appends the trailers in the documented order (docs/architecture.md, Git) after one blank line", () => {
    const text = buildCommitMessage("Add login form\r\n\r\nWith validation.  \n\n\n", {
      Status: "review",
      Task: "S00-028",
      Extra: "x",
      Action: "execute",
      Agent: "execute-ci-cd-0123456789ab",
      Role: "ci-cd",
    });
    expect(text).toBe(
      "Add login form\n\nWith validation.\n\n" +
        "Task: S00-028\nAgent: execute-ci-cd-0123456789ab\nRole: ci-cd\nAction: execute\nStatus: review\nExtra: x\n",
    );
  });

  it("folds line breaks in values so a value cannot add a trailer", () => {
    const text = buildCommitMessage("m", { Task: "S1\nStatus: done" });
    expect(text).toBe("m\n\nTask: S1 Status: done\n");
  });

  it("indents body lines git would take as the end of the message, so no forged block ends it", () => {
    const text = buildCommitMessage("Fix\n\nAgent: forged\nStatus: done\n---\n--- a\n----x\n", { Task: "T" });
    expect(text).toBe("Fix\n\nAgent: forged\nStatus: done\n ---\n --- a\n----x\n\nTask: T\n");
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom("---", "--- x", "---\t", "Status: done", ""), fc.string()), {
          minLength: 1,
        }),
        (lines) => {
          const message = `subject\n${lines.join("\n")}`.replaceAll("\0", "");
          const text = buildCommitMessage(message, { Task: "T" });
          expect(text.split("\n").some((line) => /^---(\s|$)/.test(line))).toBe(false);
          expect(text.endsWith("\n\nTask: T\n")).toBe(true);
        },
      ),
    );
  });

  it("adds one dash to a scissors line, whatever comment string precedes it, and nothing else", () => {
    const cut = "------------------------ >8 ------------------------";
    const text = buildCommitMessage(`Fix\n\n# ${cut}\n;; ${cut} x\n${cut}\n-- >8 --`, { Task: "T" });
    expect(text).toBe(`Fix\n\n# -${cut}\n;; -${cut} x\n${cut}\n-- >8 --\n\nTask: T\n`);
    // Idempotent: a message built from a built one's body keeps it as it is.
    const body = text.slice(0, text.indexOf("\n\nTask: T"));
    expect(buildCommitMessage(body, { Task: "T" })).toBe(text);
  });

  it("rejects empty messages and bad keys with the field named", () => {
    expect(() => buildCommitMessage(" \n ", { Task: "x" })).toThrow(GitInputError);
    expect(() => buildCommitMessage("m", { "Bad key": "x" })).toThrow(/trailers\.Bad key/);
    expect(() => buildCommitMessage("m", { Task: " " })).toThrow(/trailers\.Task/);
  });

  it("always ends with exactly one newline and keeps the body's first line", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((s) => s.trim() !== "" && !s.includes("\0")),
        (message) => {
          const text = buildCommitMessage(message, { Task: "T" });
          expect(text.endsWith("\n\nTask: T\n")).toBe(true);
          expect(text.endsWith("\n\n\nTask: T\n")).toBe(false);
        },
      ),
    );
  });
});
