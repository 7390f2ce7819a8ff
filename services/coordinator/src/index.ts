export { Coordinator, type CoordinatorDeps } from "./coordinator.ts";
export {
  type CoordinatorOptions,
  type ResolvedCoordinatorOptions,
  resolveCoordinatorOptions,
} from "./coordinator-options.ts";
export { ProjectSerializer } from "./project-serializer.ts";
export { commandForResult } from "./result-command-mapper.ts";
export { buildRunJob, type JobBuild } from "./run-job-builder.ts";
