import { EGRESS_DEFAULTS } from "@overseer/run-contract";
import { describe, expect, it } from "vitest";
import { isForbiddenAddress, resolveEgressProxyOptions } from "../src/index.ts";

const REQUIRED = { socketPath: "/tmp/overseer-egress-options.sock", allowHosts: ["api.example.com"] };

describe("resolveEgressProxyOptions", () => {
  it("fills every option from EGRESS_DEFAULTS and the production address rule", () => {
    const resolved = resolveEgressProxyOptions(REQUIRED);
    expect(resolved).toMatchObject({ ...EGRESS_DEFAULTS, ...REQUIRED });
    expect(resolved.allowPrivateCidrs).toEqual([]);
    expect(resolved.isForbiddenAddress).toBe(isForbiddenAddress);
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(Object.isFrozen(EGRESS_DEFAULTS)).toBe(true);
  });

  it("keeps what was passed and takes undefined as unset", () => {
    const resolved = resolveEgressProxyOptions({
      ...REQUIRED,
      idleTimeoutMs: 1000,
      maxConnections: undefined,
    });
    expect(resolved.idleTimeoutMs).toBe(1000);
    expect(resolved.maxConnections).toBe(EGRESS_DEFAULTS.maxConnections);
  });

  it.each([
    [{ connectTimeoutMs: 0 }, "connectTimeoutMs must be an integer greater than 0, received 0"],
    [{ idleTimeoutMs: 1.5 }, "idleTimeoutMs must be an integer greater than 0, received 1.5"],
    [{ maxConnections: -1 }, "maxConnections must be an integer greater than 0, received -1"],
    [{ allowPorts: [] }, "allowPorts must list at least one port, received []"],
  ])("refuses %j, naming the key, the rule and the value", (options, message) => {
    expect(() => resolveEgressProxyOptions({ ...REQUIRED, ...options })).toThrow(new RangeError(message));
  });
});
