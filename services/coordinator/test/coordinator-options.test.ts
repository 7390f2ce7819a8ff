import { hostname } from "node:os";
import { COORDINATOR_DEFAULTS } from "@overseer/settings";
import { TRANSITION_DEFAULTS } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { resolveCoordinatorOptions } from "../src/coordinator-options.ts";

describe("resolveCoordinatorOptions", () => {
  it("fills every option from COORDINATOR_DEFAULTS, the transition defaults and the host", () => {
    const resolved = resolveCoordinatorOptions();
    expect(resolved).toEqual({
      ...COORDINATOR_DEFAULTS,
      conflictRetries: TRANSITION_DEFAULTS.conflictRetries,
      id: `coordinator-${hostname()}-${process.pid}`,
    });
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(Object.isFrozen(COORDINATOR_DEFAULTS)).toBe(true);
  });

  it("keeps what was passed and takes undefined as unset", () => {
    const resolved = resolveCoordinatorOptions({
      id: "coord-a",
      leaseTtlMs: 3000,
      reconcileIntervalMs: undefined,
      maxProjects: 4,
      maxPlanTasks: 3,
    });
    expect(resolved).toMatchObject({ id: "coord-a", leaseTtlMs: 3000, maxProjects: 4, maxPlanTasks: 3 });
    expect(resolved.reconcileIntervalMs).toBe(COORDINATOR_DEFAULTS.reconcileIntervalMs);
  });

  it.each([
    [{ leaseTtlMs: 999 }, "leaseTtlMs must be an integer of at least 1000, received 999"],
    [{ reconcileIntervalMs: 0 }, "reconcileIntervalMs must be an integer of at least 1, received 0"],
    [{ resultConcurrency: 1.5 }, "resultConcurrency must be an integer of at least 1, received 1.5"],
    [{ conflictRetries: 0 }, "conflictRetries must be an integer of at least 1, received 0"],
    [{ resultAttempts: -1 }, "resultAttempts must be an integer of at least 1, received -1"],
    [{ maxPlanTasks: 0 }, "maxPlanTasks must be an integer of at least 1, received 0"],
    [{ maxProjects: 0 }, "maxProjects must be an integer of at least 1, received 0"],
    [{ id: " " }, 'id must be a non-empty name, received " "'],
  ])("refuses %j, naming the key, the rule and the value", (options, message) => {
    expect(() => resolveCoordinatorOptions(options)).toThrow(new RangeError(message));
  });
});
