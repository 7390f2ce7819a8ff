/**
 * The sandbox limits of a run unless its project sets others, the one default of every layer:
 * the sandbox spec's `limits` (`@overseer/sandbox`) and the runner config's `sandbox.pids_max`,
 * `memory_mb` and `cpu_seconds` take theirs from here. Sized for an agent CLI plus the project's
 * own build and test commands in one cgroup: pids.max counts threads, and a Node-based agent CLI
 * beside a parallel test runner (each worker a Node process of ~10 threads) passes 256; a
 * TypeScript build beside the agent passes 2 GiB. A fork bomb still stops at 512 at once, and the
 * default worker concurrency of 2 commits at most 8 GiB of a host. docs/runner-config.md says why.
 */
export const DEFAULT_SANDBOX_LIMITS = Object.freeze({
  /** Maximum number of processes/threads alive in the sandbox at once. Default 512. */
  pidsMax: 512,
  /** Memory ceiling for everything in the sandbox (tmpfs contents included). Default 4 GiB. */
  memoryBytes: 4 * 1024 ** 3,
  /** CPU-time budget per process (RLIMIT_CPU): SIGKILL when exceeded. Default 3600 s. */
  cpuSeconds: 3600,
  /** Size cap of each private tmpfs (`/tmp`, `$HOME`, `/dev/shm`). Default 1 GiB. */
  tmpfsBytes: 1024 ** 3,
});
