import { describe, expect, it } from "vitest";
import { ConfigError, formatConfigIssue } from "../src/index.ts";

describe("ConfigError", () => {
  it("sets its name, keeps the issues and prints one line per issue", () => {
    const error = new ConfigError("runner.json", [
      { path: "argv[0]", expected: "a non-empty string", received: '""' },
      { path: "", expected: "an object", received: "null", hint: "start from runner.example.json" },
    ]);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("ConfigError");
    expect(error.issues).toHaveLength(2);
    expect(error.message.split("\n")).toEqual([
      "Invalid configuration in runner.json (2 problems):",
      '  runner.json: argv[0]: expected a non-empty string, received ""',
      "  runner.json: (top level): expected an object, received null (start from runner.example.json)",
    ]);
    expect(formatConfigIssue("x", { path: "a", expected: "b", received: "c" })).toBe(
      "x: a: expected b, received c",
    );
  });
});
