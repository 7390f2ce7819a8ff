import { describe, expect, it } from "vitest";
import {
  BwrapDriver,
  createSandboxDriver,
  defaultDriverName,
  detectDriver,
  NoneDriver,
  SandboxSpecError,
  UNSAFE_NONE_ENV,
  UnsafeSandboxRefusedError,
} from "../src/index.ts";

describe("createSandboxDriver", () => {
  it("creates the bwrap driver", () => {
    expect(createSandboxDriver("bwrap")).toBeInstanceOf(BwrapDriver);
  });

  it("refuses none by default, naming both switches", () => {
    const attempt = () => createSandboxDriver("none", { env: {} });
    expect(attempt).toThrow(UnsafeSandboxRefusedError);
    expect(attempt).toThrow(/OVERSEER_SANDBOX_UNSAFE_NONE=1/);
    expect(attempt).toThrow(/allowUnsafeNone/);
  });

  it("allows none with the option or the environment switch, and only with exactly 1", () => {
    expect(createSandboxDriver("none", { allowUnsafeNone: true, env: {} })).toBeInstanceOf(NoneDriver);
    expect(createSandboxDriver("none", { env: { [UNSAFE_NONE_ENV]: "1" } })).toBeInstanceOf(NoneDriver);
    expect(() => createSandboxDriver("none", { env: { [UNSAFE_NONE_ENV]: "true" } })).toThrow(
      UnsafeSandboxRefusedError,
    );
  });

  it("rejects unknown names listing the allowed ones", () => {
    expect(() => createSandboxDriver("firejail" as never)).toThrow(SandboxSpecError);
    expect(() => createSandboxDriver("firejail" as never)).toThrow(/bwrap, gvisor, none.*"firejail"/);
    // The docker driver was removed: a leftover setting is refused, never mapped to another driver.
    expect(() => createSandboxDriver("docker" as never)).toThrow(/bwrap, gvisor, none.*"docker"/);
  });
});

describe("defaultDriverName / detectDriver", () => {
  it("defaults to bwrap", () => {
    expect(defaultDriverName()).toBe("bwrap");
  });

  it("reports bwrap available here and none refused", async () => {
    const detection = await detectDriver({ env: {} });
    expect(detection.defaultDriver).toBe("bwrap");
    expect(detection.recommended).toBe("bwrap");
    expect(detection.drivers.bwrap.available).toBe(true);
    expect(detection.drivers.bwrap.version).toMatch(/^bubblewrap /);
    expect(Object.keys(detection.drivers)).toEqual(["bwrap", "gvisor", "none"]);
    expect(detection.drivers.gvisor.detail).toMatch(/^runsc (found \(platform \w+|not found)/);
    expect(detection.drivers.none.available).toBe(false);
    expect(detection.drivers.none.detail).toContain(UNSAFE_NONE_ENV);
  });
});
