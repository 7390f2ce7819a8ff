import type { PreludeLaunch } from "@overseer/process";
import type { SandboxDriverName } from "@overseer/run-contract";
import type { SandboxSpec } from "./sandbox-spec-schema.ts";

/**
 * A command ready to spawn, produced by `SandboxDriver.prepare`. It is SINGLE-USE: spawn it once,
 * then call `cleanup()` whatever happened.
 *
 * How to run it (the contract every caller follows):
 * ```ts
 * const child = spawn(p.file, p.args, { cwd: p.cwd, env: p.env, detached: true, stdio: [...] });
 * //   execa: execa(p.file, p.args, { cwd: p.cwd, env: p.env, extendEnv: false, detached: true, ... })
 * // on timeout / stall / terminal transition:
 * await p.stop(child.pid);            // SIGTERM inside, grace, then SIGKILL of the group (+ driver kill)
 * // always, after the child has exited (finally block):
 * await p.cleanup();
 * ```
 * Spawn `file` directly (never through a shell or another wrapper process): the bwrap driver relies
 * on being the direct child of the worker (`--die-with-parent`). For bwrap, `process.kill(-pid,
 * "SIGKILL")` alone is always enough to end everything inside; `stop()` adds the graceful phase.
 */
export interface PreparedCommand {
  readonly driver: SandboxDriverName;
  readonly runId: string;
  /** Absolute path of the program to spawn. */
  readonly file: string;
  readonly args: readonly string[];
  /** The exact environment to spawn with (do not merge `process.env` into it). */
  readonly env: Readonly<Record<string, string>>;
  /** Working directory to spawn in (the checkout). */
  readonly cwd: string;
  /**
   * The same run without its host launcher, for a spawner that applies launch preludes itself
   * (@overseer/process `spawnGroup`'s `preludeLaunch`: bwrap spawned directly, the launcher's
   * steps taken in the spawner's child). Spawning `file args` instead is always right.
   */
  readonly preludeLaunch?: PreludeLaunch;
  /**
   * Ends the run: sends SIGTERM to every process of the run (inside the sandbox too), waits up to
   * `graceMs` for the spawned process to exit, then SIGKILLs its process group and applies the
   * driver's own kill (cgroup kill). Safe to call more than once and after exit.
   */
  stop(pid: number | undefined, options?: StopOptions): Promise<void>;
  /** Releases host resources (cgroups, egress proxy, runtime files). Idempotent; call after exit. */
  cleanup(): Promise<void>;
  /**
   * The limits the run ran into, one line each (`pids_max 64 reached: 212 forks refused`), as
   * far as the driver counts them (bwrap: its run cgroup); [] otherwise. Call before `cleanup`.
   */
  limitsReached(): Promise<string[]>;
}

export interface StopOptions {
  /** How long processes get between SIGTERM and SIGKILL. Default 5000 ms. */
  graceMs?: number;
}

/** How one resource limit is enforced by a driver on this host. */
export interface LimitEnforcement {
  enforced: boolean;
  /** Mechanism: `cgroup-v2`, `cgroup-v1`, `rlimit`, `pid-namespace`, `seccomp`, or `none`. */
  via: "cgroup-v2" | "cgroup-v1" | "rlimit" | "pid-namespace" | "seccomp" | "none";
  /** One line for `doctor`: what exactly is applied, or why nothing is. */
  detail: string;
}

export interface SandboxCapabilities {
  pids: LimitEnforcement;
  memory: LimitEnforcement;
  cpuTime: LimitEnforcement;
  cpuRate: LimitEnforcement;
  /** Whether every process of a run can be killed at once through the cgroup (beyond the pid namespace). */
  killAll: LimitEnforcement;
  /** The syscall filter (setuid-bit creation, TIOCSTI, io_uring), bwrap only. */
  seccomp: LimitEnforcement;
}

export interface ProbeCheck {
  ok: boolean;
  detail: string;
}

/** What `probe()` found by actually running a sandboxed command on this host (for `doctor`). */
export interface ProbeReport {
  driver: SandboxDriverName;
  available: boolean;
  version: string | null;
  /** True for the `none` driver: the agent runs with the worker's privileges. */
  unsafe: boolean;
  /** A file written in the checkout appeared on the host. */
  writeInside: ProbeCheck;
  /** Writes to a read-only bind and to an unbound host path failed, and the host copies are unchanged. */
  writeOutsideDenied: ProbeCheck;
  /** A TCP connection to a listener on the host's loopback failed and the listener saw nothing. */
  networkDenied: ProbeCheck;
  /** Capabilities dropped and no_new_privs set inside (bwrap). */
  privilegesDropped: ProbeCheck;
  limits: SandboxCapabilities;
  durationMs: number;
  problems: string[];
}

export interface SandboxDriver {
  readonly name: SandboxDriverName;
  /** The backend's version (`bubblewrap 0.8.0`), or null if unavailable. */
  version(): Promise<string | null>;
  /** Validates `spec`, sets up host resources and returns the command to spawn `argv` sandboxed. */
  prepare(argv: readonly string[], spec: SandboxSpec): Promise<PreparedCommand>;
  /** Which limits this driver enforces on this host, and how. */
  capabilities(): Promise<SandboxCapabilities>;
  /** Runs a real sandboxed command and checks the policy holds (for `doctor`). */
  probe(): Promise<ProbeReport>;
  /**
   * Releases driver-level host files (bwrap's /etc snapshots and seccomp program). Call at worker
   * shutdown, after every prepared command was cleaned up; the driver can still be used afterwards
   * (it re-creates what it needs).
   */
  dispose(): Promise<void>;
}
