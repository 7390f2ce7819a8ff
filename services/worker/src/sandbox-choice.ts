import type { RunJob, SandboxDriverName } from "@overseer/run-contract";

/** What this worker can sandbox runs with. */
export interface WorkerSandbox {
  /** The worker's driver (`OVERSEER_SANDBOX`). */
  driver: SandboxDriverName;
  /** `OVERSEER_SANDBOX_UNSAFE_NONE`: the worker may run a project's runs without a sandbox. */
  allowUnsafeNone: boolean;
  /**
   * Whether gVisor works here, from the worker's start-up probe of runsc: a worker of another
   * driver still runs the projects that ask for `sandbox.driver: gvisor` when it does. Absent: not probed.
   */
  gvisor?: { available: boolean; detail: string };
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
  if (asked === "gvisor") {
    return worker.gvisor?.available
      ? { ok: true, driver: "gvisor" }
      : {
          ok: false,
          message: `Project ${job.projectId} asks for sandbox.driver "gvisor", but gVisor does not work on this worker (${worker.gvisor?.detail ?? "runsc was not probed"}): install it on the worker (apt-get install runsc; \`overseer doctor\` shows whether it works and why not), run the project on a worker where it works, or remove sandbox.driver from the runner config. The run is not moved to a weaker sandbox.`,
        };
  }
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

/** Where this worker's runs get their per-run pids and memory limits (from `detectSandboxHost`). */
export interface WorkerLimits {
  /** The worker runs inside a container. */
  container: boolean;
  /** Controllers a run's cgroup can use here: pids, memory, cpu. */
  controllers: readonly string[];
  /** `OVERSEER_ALLOW_UNENFORCED_LIMITS`: run them anyway. */
  allowUnenforced: boolean;
}

/** The per-run limits (pids, memory) no cgroup enforces for this worker inside a container; [] on a host. */
export function unenforcedRunLimits(limits: Omit<WorkerLimits, "allowUnenforced">): ("pids" | "memory")[] {
  if (!limits.container) return [];
  return (["pids", "memory"] as const).filter((controller) => !limits.controllers.includes(controller));
}

/**
 * Inside a container, a run's `pids_max` and `memory_mb` hold only through a per-run cgroup (the
 * sandbox user is the container's uid, so RLIMIT_NPROC counts every run of the worker together,
 * and RLIMIT_AS bounds one process, not the run). Without a delegated cgroup the run is refused
 * as a configuration error naming the fix, unless the operator allowed it on this worker. On a
 * host the worker keeps running them (doctor says what is enforced).
 */
export function limitsRefusal(
  job: Pick<RunJob, "projectId" | "sandbox">,
  driver: SandboxDriverName,
  limits: WorkerLimits,
): string | null {
  if (driver === "none" || limits.allowUnenforced) return null;
  const unenforced = unenforcedRunLimits(limits);
  if (unenforced.length === 0) return null;
  const asked = { pids: `pids_max ${job.sandbox.pidsMax}`, memory: `memory_mb ${job.sandbox.memoryMb}` };
  const missing = unenforced.map((controller) => asked[controller]);
  return `Project ${job.projectId}'s runs ask for sandbox limits (${missing.join(", ")}) that this worker cannot enforce: it runs inside a container without a delegated cgroup, so a fork bomb or a memory hog would reach the whole container. Give the worker container a writable cgroup (docker-compose.yml's worker service: OVERSEER_PREPARE_BWRAP=1 with SYS_ADMIN; infra/README.md, "Limits inside the worker container"), or set OVERSEER_ALLOW_UNENFORCED_LIMITS=1 on this worker to run them bounded only by the container's own limits.`;
}
