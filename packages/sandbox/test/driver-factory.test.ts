import { describe, expect, it } from "vitest";
import {
  BwrapDriver,
  createSandboxDriver,
  DockerDriver,
  defaultDriverName,
  detectDriver,
  NoneDriver,
  SandboxSpecError,
  UNSAFE_NONE_ENV,
  UnsafeSandboxRefusedError,
} from "../src/index.ts";

describe("createSandboxDriver", () => {
  it("creates bwrap and docker drivers", () => {
    expect(createSandboxDriver("bwrap")).toBeInstanceOf(BwrapDriver);
    expect(createSandboxDriver("docker")).toBeInstanceOf(DockerDriver);
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
    expect(() => createSandboxDriver("firejail" as never)).toThrow(/bwrap, docker, none.*"firejail"/);
  });
});

describe("defaultDriverName / detectDriver", () => {
  it("defaults to bwrap on Linux and docker elsewhere", () => {
    expect(defaultDriverName("linux")).toBe("bwrap");
    expect(defaultDriverName("darwin")).toBe("docker");
  });

  it("reports bwrap available here, docker without an engine, none refused", async () => {
    const detection = await detectDriver({ env: {} });
    expect(detection.defaultDriver).toBe("bwrap");
    expect(detection.recommended).toBe("bwrap");
    expect(detection.drivers.bwrap.available).toBe(true);
    expect(detection.drivers.bwrap.version).toMatch(/^bubblewrap /);
    expect(detection.drivers.docker.available).toBe(false);
    expect(detection.drivers.none.available).toBe(false);
    expect(detection.drivers.none.detail).toContain(UNSAFE_NONE_ENV);
  });
});
