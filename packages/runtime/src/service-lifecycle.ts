import { type HealthService, healthFilePath, startHeartbeatFile } from "./heartbeat-file.ts";

export interface ServiceLifecycleOptions {
  service: HealthService;
  /** Period of the heartbeat file (`OVERSEER_HEARTBEAT_INTERVAL_MS`). */
  heartbeatIntervalMs: number;
  logger: { info(fields: { signal: string }, message: string): void };
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
 * `release` — and exits with 0.
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
    await options.stop();
    heartbeatFile.stop();
    await options.release?.();
    process.exit(0);
  }
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
