export { createLogger, LOGGER_DEFAULTS, type Logger, type LoggerOptions } from "./logger.ts";
export { runUntilSignalled, type ServiceLifecycleOptions } from "./service-lifecycle.ts";
