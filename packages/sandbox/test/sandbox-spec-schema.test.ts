import { DEFAULT_SANDBOX_LIMITS } from "@overseer/run-contract";
import { describe, expect, it } from "vitest";
import { parseSandboxSpec, SandboxSpecError } from "../src/index.ts";

const base = { checkoutDir: "/data/wt/run1", controlDir: "/data/control/run1", env: { PATH: "/usr/bin" } };

describe("parseSandboxSpec", () => {
  it("fills documented defaults and normalises paths", () => {
    const spec = parseSandboxSpec({
      ...base,
      checkoutDir: "/data/wt//x/../run1/",
      readOnlyBinds: ["/opt/h/"],
    });
    expect(spec.checkoutDir).toBe("/data/wt/run1");
    expect(spec.readOnlyBinds).toEqual(["/opt/h"]);
    expect(spec.network).toEqual({ mode: "none" });
    expect(spec.limits).toEqual({ ...DEFAULT_SANDBOX_LIMITS });
    expect(spec.runId).toMatch(/^[0-9a-f]{12}$/);
    expect(spec.uid).toBeUndefined();
    expect(spec.commands).toEqual({});
  });

  it("keeps partial limits and fills the rest", () => {
    expect(parseSandboxSpec({ ...base, limits: { pidsMax: 64 } }).limits).toEqual({
      ...DEFAULT_SANDBOX_LIMITS,
      pidsMax: 64,
    });
  });

  it.each([
    [{ checkoutDir: "relative/dir" }, /checkoutDir: expected an absolute path, received "relative\/dir"/],
    [
      { checkoutDir: "/" },
      /checkoutDir: expected a directory the sandbox may make writable.*, received "\/"/,
    ],
    [
      { controlDir: "/etc/overseer" },
      /controlDir: expected a directory the sandbox may make writable.*received "\/etc\/overseer"/,
    ],
    [{ checkoutDir: "/usr/local/x" }, /system directory/],
    [
      { readOnlyBinds: ["/"] },
      /readOnlyBinds\[0\]: expected a specific directory the run needs.*received "\/"/,
    ],
    [{ readOnlyBinds: ["/proc/1/root"] }, /readOnlyBinds\[0\]: expected a specific directory the run needs/],
    [{ env: { "BAD-NAME": "x" } }, /env\["BAD-NAME"\]: expected an environment variable name matching/],
    [
      { commands: { "../escape": "/opt/x" } },
      /commands\["\.\.\/escape"\]: expected a key that is a command name of 1-64 characters/,
    ],
    [
      { commands: { "overseer-agent": "bin/overseer-agent" } },
      /commands\["overseer-agent"\]: expected an absolute path, received "bin\/overseer-agent"/,
    ],
    [{ env: { A: "nul\0byte" } }, /env.A: expected an environment value without NUL/],
    [{ uid: 0 }, /uid: expected an unprivileged uid\/gid .*, received 0/],
    [
      { network: { mode: "proxy", allowHosts: [] } },
      /network.allowHosts: expected at least one host \(proxy mode needs one/,
    ],
    [
      { network: { mode: "proxy", allowHosts: ["https://x.com"] } },
      /network.allowHosts\[0\]: expected a host name or IP/,
    ],
    [
      { network: { mode: "proxy", allowHosts: ["x.com:99999"] } },
      /network.allowHosts\[0\]: expected a host name or IP/,
    ],
    [
      { network: { mode: "proxy", allowHosts: ["*.com"] } },
      /network.allowHosts\[0\]: expected a host name or IP/,
    ],
    [
      { network: { mode: "open" } },
      /network.mode: expected a network mode: "none" or "proxy", received "open"/,
    ],
    [
      { limits: { memoryBytes: 1024 } },
      /limits.memoryBytes: expected at least 64 MiB \(an agent cannot run in less\), received 1024/,
    ],
    [{ runId: "../../etc" }, /runId: expected a run id of 1-64 characters/],
  ])("rejects %j", (patch, message) => {
    expect(() => parseSandboxSpec({ ...base, ...patch })).toThrow(SandboxSpecError);
    expect(() => parseSandboxSpec({ ...base, ...patch })).toThrow(message);
  });

  it("normalises allow-listed host names", () => {
    const spec = parseSandboxSpec({
      ...base,
      network: {
        mode: "proxy",
        allowHosts: ["Registry.NPMJS.org", "[::1]", "1.2.3.4", "LLM.corp.example:8443", "*.Example.com"],
      },
    });
    expect(spec.network).toEqual({
      mode: "proxy",
      allowHosts: ["registry.npmjs.org", "[::1]", "1.2.3.4", "llm.corp.example:8443", "*.example.com"],
    });
  });

  it("reports every bad field at once", () => {
    expect(() => parseSandboxSpec({ checkoutDir: 1, controlDir: "x" })).toThrow(
      /checkoutDir: .*; controlDir: .*; env: /,
    );
  });
});
