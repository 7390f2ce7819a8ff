export { Coordinator, type CoordinatorDeps, type CoordinatorOptions } from "./coordinator.ts";
export { ProjectSerializer } from "./project-serializer.ts";
export { commandForResult } from "./result-command-mapper.ts";
export { buildRunJob, type JobBuild, retryPolicyOf } from "./run-job-builder.ts";
