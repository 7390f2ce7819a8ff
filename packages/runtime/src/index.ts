export { createLogger, type Logger, type LoggerOptions } from "./logger.ts";
export { runUntilSignalled, type ServiceLifecycleOptions } from "./service-lifecycle.ts";
