import { readFileSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";

/**
 * The CPU priority of the processes a service starts for its runs (git, the agent, hooks and
 * checks), below the services' own.
 *
 * Why. When runs keep every core busy, the gateway, the coordinator and the worker's own event
 * loop wait for a core behind them: at 1,000 busy projects on two cores the gateway's p99 more
 * than doubled once git calls were issued concurrently. A niceness of 10 gives a run's process
 * about a tenth of the weight of a service's, so the services answer first and the runs still get
 * every cycle the services leave (the scheduler never idles a core for priority).
 *
 * Two levers, both lowering only (no privilege needed):
 * - the process's own niceness, which everything it starts inherits; it orders processes within
 *   one scheduling group, e.g. a container's cgroup;
 * - where the kernel gives each session a scheduling group of its own (autogroup, on by default
 *   on many hosts outside containers' cgroups), the niceness of the child's session: every
 *   detached child leads a new session, and a new session starts at niceness 0 whatever its
 *   creator's, weighing as much as the whole gateway.
 * A sandbox that starts a session of its own inside (bwrap --new-session) keeps the process
 * niceness but its inner session's group starts at 0 again.
 */

// 0 until a service says otherwise: the worker sets it (default PROCESS_DEFAULTS.runNice); the
// gateway's and the CLI's children answer a person and keep their priority.
let runNice = 0;
let autogroups: boolean | undefined;

/**
 * Niceness for the run processes this service starts (`OVERSEER_RUN_NICE`, default
 * `PROCESS_DEFAULTS.runNice` in the worker); 0 leaves them at its own.
 */
export function useRunNice(nice: number): void {
  runNice = nice;
}

/** The niceness run processes get now. */
export function currentRunNice(): number {
  return runNice;
}

/**
 * Lowers the CPU priority of `pid`, which leads a session of its own (a detached child: writing
 * its session's group would otherwise lower this service's), to `nice`. Best effort: a process
 * already gone or a host without these files keeps its priority.
 */
export function lowerSessionPriority(pid: number, nice: number = runNice): void {
  if (nice <= 0) return;
  try {
    setPriority(pid, nice);
  } catch {
    // Gone already, or not ours.
  }
  if (!autogroupsEnabled()) return;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // Gone already.
  }
}

/** Whether the kernel gives each session a scheduling group of its own (autogroup). */
export function autogroupsEnabled(): boolean {
  if (autogroups === undefined) {
    try {
      autogroups = readFileSync("/proc/sys/kernel/sched_autogroup_enabled", "utf8").trim() === "1";
    } catch {
      autogroups = false;
    }
  }
  return autogroups;
}
