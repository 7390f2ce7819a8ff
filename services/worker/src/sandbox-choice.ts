import type { RunJob, SandboxDriverName } from "@overseer/run-contract";

/** What this worker can sandbox runs with. */
export interface WorkerSandbox {
  /** The worker's driver (`OVERSEER_SANDBOX`). */
  driver: SandboxDriverName;
  /** `OVERSEER_SANDBOX_UNSAFE_NONE`: the worker may run a project's runs without a sandbox. */
  allowUnsafeNone: boolean;
}

export type SandboxChoice = { ok: true; driver: SandboxDriverName } | { ok: false; message: string };

/**
 * The driver for one run: the project's `sandbox.driver` when this worker can honour it, its own
 * otherwise (no driver asked). A driver the worker cannot honour refuses the run as a
 * configuration error naming both sides — the run never silently goes to another driver.
 */
export function chooseSandbox(
  job: Pick<RunJob, "projectId" | "sandbox">,
  worker: WorkerSandbox,
): SandboxChoice {
  const choice = chooseDriver(job, worker);
  if (choice.ok && choice.driver === "none" && job.sandbox.image !== undefined) {
    return {
      ok: false,
      message: `Project ${job.projectId} runs on the image ${job.sandbox.image} (sandbox.image), which needs a sandbox driver to put the image's system in place: run it under bwrap (remove sandbox.driver "none" or OVERSEER_SANDBOX=none), or remove sandbox.image.`,
    };
  }
  return choice;
}

function chooseDriver(job: Pick<RunJob, "projectId" | "sandbox">, worker: WorkerSandbox): SandboxChoice {
  const asked = job.sandbox.driver;
  if (asked === undefined || asked === worker.driver) return { ok: true, driver: worker.driver };
  if (asked === "none") {
    return worker.allowUnsafeNone
      ? { ok: true, driver: "none" }
      : {
          ok: false,
          message: `Project ${job.projectId} asks for sandbox.driver "none" (no isolation), which this worker refuses: set OVERSEER_SANDBOX_UNSAFE_NONE=1 on the worker to allow it, or remove sandbox.driver from the runner config to run under bwrap.`,
        };
  }
  return {
    ok: false,
    message: `Project ${job.projectId} asks for sandbox.driver "${asked}", but this worker runs its jobs with "${worker.driver}" (OVERSEER_SANDBOX): run this project on a ${asked} worker, or remove sandbox.driver from the runner config.`,
  };
}
