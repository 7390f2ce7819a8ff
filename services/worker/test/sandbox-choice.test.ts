/**
 * A project's `sandbox.driver` is honoured or its runs are refused as a configuration error,
 * never run under another driver (sandbox-choice.ts); the refusal reaches the result queue
 * through a real worker (Redis, git) before any checkout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseSandbox, limitsRefusal, unenforcedRunLimits } from "../src/sandbox-choice.ts";
import { WorkerRig } from "./support/worker-rig.ts";

const job = (driver?: "bwrap" | "gvisor" | "none") => ({
  projectId: "p1",
  sandbox: { pidsMax: 1, memoryMb: 16, cpuSeconds: 1, networkAllowHosts: [], ...(driver ? { driver } : {}) },
});

describe("limitsRefusal", () => {
  const inContainer = (controllers: string[], allowUnenforced = false) => ({
    container: true,
    controllers,
    allowUnenforced,
  });

  it("refuses runs in a container without a delegated cgroup, naming the limits and both fixes", () => {
    const message = limitsRefusal(job(), "bwrap", inContainer(["cpu"])) ?? "";
    expect(message).toContain("pids_max 1, memory_mb 16");
    expect(message).toContain("OVERSEER_ALLOW_UNENFORCED_LIMITS=1");
    expect(message).toContain("infra/README.md");
    expect(unenforcedRunLimits(inContainer(["memory"]))).toEqual(["pids"]);
  });

  it("runs them where the cgroup is delegated, on a host, without a sandbox, or when the operator allowed it", () => {
    expect(limitsRefusal(job(), "bwrap", inContainer(["pids", "memory"]))).toBeNull();
    expect(
      limitsRefusal(job(), "bwrap", { container: false, controllers: [], allowUnenforced: false }),
    ).toBeNull();
    expect(limitsRefusal(job(), "none", inContainer([]))).toBeNull();
    expect(limitsRefusal(job(), "bwrap", inContainer([], true))).toBeNull();
  });
});

describe("chooseSandbox", () => {
  const bwrapWorker = { driver: "bwrap" as const, allowUnsafeNone: false };

  it("uses the worker's driver when the project asks for none in particular or for the same one", () => {
    expect(chooseSandbox(job(), bwrapWorker)).toEqual({ ok: true, driver: "bwrap" });
    expect(chooseSandbox(job("bwrap"), bwrapWorker)).toEqual({ ok: true, driver: "bwrap" });
  });

  it("runs a project without a sandbox only where the worker allows it", () => {
    expect(chooseSandbox(job("none"), { driver: "bwrap", allowUnsafeNone: true })).toEqual({
      ok: true,
      driver: "none",
    });
    const refused = chooseSandbox(job("none"), bwrapWorker);
    expect(refused.ok).toBe(false);
    expect(refused.ok ? "" : refused.message).toContain("OVERSEER_SANDBOX_UNSAFE_NONE=1");
  });

  it("runs gVisor projects on a bwrap worker where runsc passed the probe, and refuses them elsewhere", () => {
    const works = { available: true, detail: "runsc version 0.0~20221219.0 (platform ptrace)" };
    expect(chooseSandbox(job("gvisor"), { ...bwrapWorker, gvisor: works })).toEqual({
      ok: true,
      driver: "gvisor",
    });
    expect(chooseSandbox(job("gvisor"), { driver: "gvisor", allowUnsafeNone: false })).toEqual({
      ok: true,
      driver: "gvisor",
    });
    const missing = chooseSandbox(job("gvisor"), {
      ...bwrapWorker,
      gvisor: { available: false, detail: "runsc is not installed" },
    });
    expect(missing.ok ? "" : missing.message).toContain(
      'Project p1 asks for sandbox.driver "gvisor", but gVisor does not work on this worker (runsc is not installed): install it on the worker (apt-get install runsc;',
    );
    const unprobed = chooseSandbox(job("gvisor"), bwrapWorker);
    expect(unprobed.ok ? "" : unprobed.message).toContain("(runsc was not probed)");
  });

  it("refuses bwrap on a worker that runs without a sandbox", () => {
    const refused = chooseSandbox(job("bwrap"), { driver: "none", allowUnsafeNone: true });
    expect(refused.ok ? "" : refused.message).toBe(
      'Project p1 asks for sandbox.driver "bwrap", but this worker runs its jobs with "none" (OVERSEER_SANDBOX): run this project on a bwrap worker, or remove sandbox.driver from the runner config.',
    );
  });
});

describe("a worker that cannot honour the project's driver", () => {
  const rig = new WorkerRig();
  beforeAll(() =>
    rig.setup({
      sandboxRefusal: (run) => {
        const choice = chooseSandbox(run, { driver: "bwrap", allowUnsafeNone: false });
        return choice.ok ? null : choice.message;
      },
    }),
  );
  afterAll(() => rig.teardown());

  it("ends the run as a configuration error naming the fix, and the agent never runs", async () => {
    const base = rig.job("echo ran > src/ran.txt; echo m | overseer-agent submit --message-file -", {
      taskId: "S03-001",
    });
    const result = await rig.run({ ...base, sandbox: { ...base.sandbox, driver: "none" } });
    expect(result.outcome).toMatchObject({ kind: "misconfigured", reason: "configuration_error" });
    expect(result.outcome.kind === "misconfigured" && result.outcome.message).toContain(
      'asks for sandbox.driver "none"',
    );
    expect(result.timing.spawnedAt).toBeNull();
    // No sandbox was chosen: the run records none.
    expect(result.sandboxDriver).toBeUndefined();
    expect(await rig.head("overseer/task/S03-001")).toBeNull();
  });

  it("records the driver a run it honours ran under", async () => {
    const result = await rig.run(
      rig.job("echo ran > src/ran.txt; echo m | overseer-agent submit --message-file -", {
        taskId: "S03-002",
      }),
    );
    expect(result.outcome.kind).toBe("transition");
    expect(result.sandboxDriver).toBe("bwrap");
  });
});
