import path from "node:path";
import { CLUSTER_DEFAULTS, GATEWAY_DEFAULTS } from "@overseer/settings";
import { describe, expect, it } from "vitest";
import { resolveGatewayOptions } from "../src/index.ts";

describe("resolveGatewayOptions", () => {
  it("fills every option from GATEWAY_DEFAULTS and the gateway's own locations", () => {
    const resolved = resolveGatewayOptions();
    expect(resolved).toMatchObject(GATEWAY_DEFAULTS);
    expect(resolved.dataDir).toBe(path.resolve(CLUSTER_DEFAULTS.dataDir, "gateway"));
    expect(resolved.webDir).toMatch(/dist$/);
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(Object.isFrozen(GATEWAY_DEFAULTS)).toBe(true);
  });

  it("keeps what was passed and takes undefined as unset", () => {
    const resolved = resolveGatewayOptions({ port: 0, maxBodyBytes: undefined, tokenCacheTtlMs: 0 });
    expect(resolved.port).toBe(0);
    expect(resolved.maxBodyBytes).toBe(GATEWAY_DEFAULTS.maxBodyBytes);
    expect(resolved.tokenCacheTtlMs).toBe(0);
  });

  it.each([
    [{ maxBodyBytes: 0 }, "maxBodyBytes must be a number greater than 0, received 0"],
    [{ shutdownGraceMs: -5 }, "shutdownGraceMs must be a number greater than 0, received -5"],
    [{ keepAliveMs: Number.NaN }, "keepAliveMs must be a number greater than 0, received NaN"],
    [{ statusCacheTtlMs: -1 }, "statusCacheTtlMs must be a number >= 0, received -1"],
    [{ port: 70_000 }, "port must be an integer from 0 to 65535, received 70000"],
  ])("refuses %j, naming the key, the rule and the value", (options, message) => {
    expect(() => resolveGatewayOptions(options)).toThrow(new RangeError(message));
  });
});
