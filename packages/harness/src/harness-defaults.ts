import { PROCESS_DEFAULTS } from "@overseer/process";

/** Every default limit of the harness, defined once (each option's doc names its default). */
export const HARNESS_DEFAULTS = Object.freeze({
  /** Time between SIGTERM and SIGKILL when a run's process group is ended. */
  killGraceMs: PROCESS_DEFAULTS.killGraceMs,
  /** No output and no file change for this long is a stall; 0: no idle watchdog. */
  idleTimeoutMs: 0,
  /** Backup poll of the control dir, for filesystems without inotify. */
  controlPollMs: 1000,
  /** Bound on waiting for stdout/stderr to close once the group is gone. */
  drainTimeoutMs: 2000,
  /** Time a harness gets to exit by itself after its transition. */
  transitionLingerMs: 250,
  /** Bytes of output kept per run (the last ones). */
  maxOutputBytes: 1024 * 1024,
  /** Delay before a partial output line is flushed. */
  outputFlushMs: 100,
  /** Largest control file accepted. */
  controlMaxBytes: 256 * 1024,
  /** How long to wait for a group to disappear after SIGKILL before giving up. */
  killWaitMs: 2000,
  /** Directories the idle watchdog watches at most. */
  maxWatchedDirs: 4096,
});
