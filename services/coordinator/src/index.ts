export { Coordinator, type CoordinatorDeps, type CoordinatorOptions } from "./coordinator.ts";
export { buildRunJob, renderRunPrompt, retryPolicyOf, type JobBuild } from "./run-job-builder.ts";
export { commandForResult, type RetryPolicy } from "./result-command-mapper.ts";
export { ProjectSerializer } from "./project-serializer.ts";
