import { describe, expect, it } from "vitest";
import { type PreparedCommand, RUN_PREPARED_DEFAULTS, runPreparedCommand } from "../src/index.ts";

/** Never spawned: bad options are refused before anything runs (bwrap-driver.test.ts runs real ones). */
const NEVER_RUN = {} as PreparedCommand;

describe("runPreparedCommand options", () => {
  it("has frozen defaults", () => {
    expect(Object.isFrozen(RUN_PREPARED_DEFAULTS)).toBe(true);
    expect(RUN_PREPARED_DEFAULTS).toMatchObject({
      timeoutMs: 60_000,
      graceMs: 2000,
      maxOutputBytes: 1024 * 1024,
    });
  });

  it.each([
    [{ timeoutMs: -1 }, "timeoutMs must be an integer >= 0, received -1"],
    [{ graceMs: 1.5 }, "graceMs must be an integer >= 0, received 1.5"],
    [{ maxOutputBytes: Number.NaN }, "maxOutputBytes must be an integer >= 0, received NaN"],
  ])("refuses %j before spawning, naming the key, the rule and the value", (options, message) => {
    expect(() => runPreparedCommand(NEVER_RUN, options)).toThrow(new RangeError(message));
  });
});
