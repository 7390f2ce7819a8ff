import { describe, expect, it } from "vitest";
import { hasMarker, ownedOpenPull, withMarkedContent } from "../src/pull-request-marker.ts";

describe("pull request marker", () => {
  it("appends Overseer's part to a body and replaces only that part later", () => {
    const first = withMarkedContent("", "task-1", "summary A");
    expect(first).toBe("<!-- overseer:task-1 -->\nsummary A\n<!-- /overseer:task-1 -->");
    const edited = `Note from a person\n\n${first}\n\nanother note`;
    const second = withMarkedContent(edited, "task-1", "summary B");
    expect(second).toBe(
      "Note from a person\n\n<!-- overseer:task-1 -->\nsummary B\n<!-- /overseer:task-1 -->\n\nanother note",
    );
    expect(hasMarker(second, "task-1")).toBe(true);
    expect(hasMarker(second, "task-2")).toBe(false);
  });

  it("finds the open pull request that holds the marker, whatever its place", () => {
    const open = [
      { n: 1, body: withMarkedContent("", "task-1", "x") },
      { n: 2, body: withMarkedContent("", "task-2", "y") },
    ];
    const refuse = () => new Error("refused");
    expect(ownedOpenPull(open, "task-2", (p) => p.body, refuse)?.n).toBe(2);
    expect(ownedOpenPull([], "task-2", (p: { body: string }) => p.body, refuse)).toBeNull();
  });

  it("refuses an open pull request from the branch that someone else opened (no marker, or a null body)", () => {
    const refuse = (theirs: { n: number }) => new Error(`#${theirs.n} is not ours`);
    expect(() => ownedOpenPull([{ n: 7, body: "by hand" }], "task-1", (p) => p.body, refuse)).toThrow(
      "#7 is not ours",
    );
    expect(() => ownedOpenPull([{ n: 8, body: null }], "task-1", (p) => p.body, refuse)).toThrow(
      "#8 is not ours",
    );
  });
});
