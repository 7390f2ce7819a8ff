export {
  type CommandApplier,
  createProject,
  importTasks,
  type StartMissionOptions,
  type StartProjectOptions,
  startMission,
  startProject,
  updateProjectConfig,
} from "./project-commands.ts";
export {
  type ApplyCommandOptions,
  liveEventOf,
  TRANSITION_DEFAULTS,
  TransitionApplier,
  type TransitionApplierDeps,
  type TransitionApplierOptions,
} from "./transition-applier.ts";
