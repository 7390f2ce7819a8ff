export { currentRunNice, lowerSessionPriority, useRunNice } from "./child-priority.ts";
export { KeptDirs } from "./kept-dirs.ts";
export type { LaunchPrelude, LaunchStep, PreludeLaunch } from "./launch-prelude.ts";
export { PROCESS_DEFAULTS } from "./process-defaults.ts";
export { isProcessAlive, isProcessGroupAlive } from "./process-liveness.ts";
export { removeTree } from "./remove-tree.ts";
export { lowerOwnPriority, type OwnPriority } from "./service-priority.ts";
export {
  type GroupChild,
  launchPreludeAvailable,
  processSpawnerPid,
  type SpawnedGroup,
  type SpawnGroupOptions,
  spawnGroup,
  useProcessSpawner,
} from "./spawn-group.ts";
export { SPAWNER_PROGRAM_CHOICES, type SpawnerProgramChoice } from "./spawner-program.ts";
