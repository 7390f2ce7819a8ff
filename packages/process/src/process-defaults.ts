/** Defaults of process handling, defined once (settings, sandbox drivers and the harness read them here). */
export const PROCESS_DEFAULTS = Object.freeze({
  /** Delay between SIGTERM and SIGKILL when a run's process group is stopped (`OVERSEER_KILL_GRACE_MS`). */
  killGraceMs: 5000,
  /**
   * Start children (git) through one small spawner process rather than forking this one
   * (`OVERSEER_PROCESS_SPAWNER`; spawn-group.ts).
   */
  spawner: true,
  /** Which spawner program: Perl where found, else Node (`OVERSEER_PROCESS_SPAWNER_PROGRAM`; spawner-program.ts). */
  spawnerProgram: "auto" as "auto" | "perl" | "node",
  /** Niceness of the processes a worker starts for its runs (`OVERSEER_RUN_NICE`; child-priority.ts). */
  runNice: 10,
});
