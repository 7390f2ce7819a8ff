import { describe, expect, it } from "vitest";
import { GATEWAY_CLIENT_DEFAULTS, resolveGatewayClientOptions } from "../src/gateway-client.ts";

const REQUIRED = { baseUrl: "http://127.0.0.1:7070", token: "ovr_test" };

describe("resolveGatewayClientOptions", () => {
  it("fills the request time limit from GATEWAY_CLIENT_DEFAULTS and keeps what was passed", () => {
    expect(resolveGatewayClientOptions(REQUIRED)).toEqual({ ...REQUIRED, ...GATEWAY_CLIENT_DEFAULTS });
    expect(resolveGatewayClientOptions({ ...REQUIRED, timeoutMs: 500 }).timeoutMs).toBe(500);
    expect(Object.isFrozen(GATEWAY_CLIENT_DEFAULTS)).toBe(true);
  });

  it("refuses a time limit that is not a positive integer, naming the key, the rule and the value", () => {
    expect(() => resolveGatewayClientOptions({ ...REQUIRED, timeoutMs: 0 })).toThrow(
      new RangeError("timeoutMs must be an integer greater than 0, received 0"),
    );
  });
});
