export { AgentCliCache, type AgentCliInstall } from "./agent-cli-cache.ts";
export { executeRun, type RunExecutorDeps, type RunPaths, WorkerShutdownError } from "./run-executor.ts";
export { postgresRunFence, type RunFence } from "./run-fence.ts";
export { sandboxWrapFor } from "./sandbox-wrap.ts";
export { scopeViolations } from "./scope-checker.ts";
export {
  type ResolvedWorkerOptions,
  resolveWorkerOptions,
  type WorkerServiceOptions,
} from "./worker-options.ts";
export { WorkerService, type WorkerServiceDeps } from "./worker-service.ts";
