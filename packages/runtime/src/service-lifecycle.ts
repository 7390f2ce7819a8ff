import { type HealthService, healthFilePath, startHeartbeatFile } from "./heartbeat-file.ts";

export interface ServiceLifecycleOptions {
  service: HealthService;
  /** Period of the heartbeat file (`OVERSEER_HEARTBEAT_INTERVAL_MS`). */
  heartbeatIntervalMs: number;
  logger: {
    info(fields: { signal: string }, message: string): void;
    warn(fields: { graceMs: number }, message: string): void;
  };
  /**
   * Bound of the whole shutdown (`stop` then `release`), in ms: past it the process exits
   * with 1 whatever is still pending (`OVERSEER_SHUTDOWN_GRACE_MS`; a worker adds its drain).
   * Default: unbounded.
   */
  graceMs?: number;
  /** Ends the service's own work (takes nothing new, lets what runs finish); the heartbeat stays up meanwhile. */
  stop: () => Promise<void>;
  /** Closes connections once the heartbeat file is gone. */
  release?: () => Promise<void>;
  /** A signal that arrives while stopping (the worker cuts its drain short). Default: ignored. */
  onSignalWhileStopping?: () => void;
}

/**
 * How a started service (coordinator, gateway, worker) lives and ends: it keeps its heartbeat
 * file fresh for container health checks (`node dist/healthcheck.js <service>`), and the first
 * SIGTERM or SIGINT stops it gracefully — `stop`, then the heartbeat file is removed, then
 * `release` — and exits with 0; or, when that takes longer than `graceMs`, exits with 1 then.
 */
export function runUntilSignalled(options: ServiceLifecycleOptions): void {
  const heartbeatFile = startHeartbeatFile({
    file: healthFilePath(options.service),
    service: options.service,
    intervalMs: options.heartbeatIntervalMs,
  });
  let stopping = false;
  async function shutdown(signal: string): Promise<void> {
    if (stopping) {
      options.onSignalWhileStopping?.();
      return;
    }
    stopping = true;
    options.logger.info({ signal }, "shutting down");
    const { graceMs } = options;
    if (graceMs !== undefined) {
      setTimeout(() => {
        heartbeatFile.stop();
        options.logger.warn({ graceMs }, `did not stop within its grace of ${graceMs} ms; exiting now`);
        process.exit(1);
      }, graceMs).unref();
    }
    await options.stop();
    heartbeatFile.stop();
    await options.release?.();
    process.exit(0);
  }
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
