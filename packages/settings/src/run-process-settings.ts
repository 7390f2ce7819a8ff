import { PROCESS_DEFAULTS, SPAWNER_PROGRAM_CHOICES } from "@overseer/process";
import { booleanSetting, integer, oneOf } from "./setting-value-schemas.ts";
import { WORKER_DEFAULTS } from "./worker-defaults.ts";

/** How a service starts the processes of its runs (@overseer/process): through whom, at what priority. */

/** `OVERSEER_PROCESS_SPAWNER` (spawn-group.ts, process-spawner.ts). */
export const PROCESS_SPAWNER_SPEC = {
  name: "OVERSEER_PROCESS_SPAWNER",
  fallback: String(PROCESS_DEFAULTS.spawner),
  description:
    "Worker and gateway start git (and a worker its runs' agents) through one small spawner process of their own (started on first use, again if it dies, gone with the service) rather than forking themselves for each process (a fork's CPU grows with the forked process's memory); 0 forks the service for each process.",
  schema: booleanSetting,
};

/** `OVERSEER_PROCESS_SPAWNER_PROGRAM` (spawner-program.ts). */
export const PROCESS_SPAWNER_PROGRAM_SPEC = {
  name: "OVERSEER_PROCESS_SPAWNER_PROGRAM",
  fallback: PROCESS_DEFAULTS.spawnerProgram,
  description:
    "Which program is that spawner: auto takes the Perl one where a perl is on PATH (a fork from it costs about half the CPU of one from the ~55 MB Node one; perl-base and git bring perl), else the Node one; perl the same, warning when it falls back; node always the Node one.",
  schema: oneOf(SPAWNER_PROGRAM_CHOICES),
};

/** `OVERSEER_WORKER_NICE` (service-priority.ts). */
export const WORKER_NICE_SPEC = {
  name: "OVERSEER_WORKER_NICE",
  fallback: String(WORKER_DEFAULTS.workerNice),
  description:
    "Niceness (0–19) of the worker's own process (all its threads) below the gateway's and the coordinator's, so that they answer first when a host's cores are busy; the worker still gets every cycle they leave. Where each session is its own scheduling group (autogroup), its session's group gets it too when the worker leads its session (as under overseer up or in a container). Its runs' processes never run above it (OVERSEER_RUN_NICE or this, whichever is higher). 0 leaves it.",
  schema: integer(0, 19),
};

/** `OVERSEER_RUN_NICE` (child-priority.ts). */
export const RUN_NICE_SPEC = {
  name: "OVERSEER_RUN_NICE",
  fallback: String(WORKER_DEFAULTS.runNice),
  description:
    "Niceness (0–19) of the processes a worker starts for its runs (git, the agent, hooks) and of its process spawner, below the services' own, so that the gateway, the coordinator and the workers' event loops answer first when runs keep every core busy; runs still get every cycle the services leave. On a host where each session is its own scheduling group (autogroup), the run's session gets it too. 0 leaves them at the worker's priority.",
  schema: integer(0, 19),
};

/** The settings above, by their key in the service settings. */
export const RUN_PROCESS_SPECS = {
  processSpawner: PROCESS_SPAWNER_SPEC,
  processSpawnerProgram: PROCESS_SPAWNER_PROGRAM_SPEC,
  runNice: RUN_NICE_SPEC,
  workerNice: WORKER_NICE_SPEC,
};
