/**
 * Entry point: `tsx services/coordinator/src/coordinator-main.ts`. Settings come from the
 * environment (see the README's configuration reference). SIGTERM/SIGINT stop gracefully:
 * leases are released so another replica takes over at once.
 */
import { setTimeout as delay } from "node:timers/promises";
import { connectDatabase, ensureDatabaseExists, migrateToLatest } from "@overseer/db";
import {
  createRedis,
  LiveChannel,
  RunQueues,
  redisTarget,
  resolveLiveOptions,
  resolveQueueOptions,
} from "@overseer/queue";
import { createLogger, runUntilSignalled } from "@overseer/runtime";
import { loadSettingsOrExit } from "@overseer/settings";
import { startRunTracing } from "@overseer/telemetry";
import { Coordinator } from "./coordinator.ts";
import { resolveCoordinatorOptions } from "./coordinator-options.ts";

const settings = loadSettingsOrExit("coordinator");
const logger = createLogger({ name: "coordinator", level: settings.logLevel });

await ensureDatabaseExists(settings.databaseUrl);
// A claim cut off mid-transaction (a half-open connection) holds its lease no longer than the TTL.
const database = connectDatabase(settings.databaseUrl, {
  applicationName: "overseer-coordinator",
  idleInTransactionTimeoutMs: settings.coordinatorIdleTxMs ?? settings.leaseTtlMs,
});
await migrateToLatest(database.db);
const redis = createRedis(redisTarget(settings));
const workerConnection = createRedis(redisTarget(settings));
// Without BullMQ's scripts, whose copy into every pipeline made from a connection cost more than
// the pipeline itself: the live events' publications and the results' acknowledgements.
const plainRedis = createRedis(redisTarget(settings));
const queues = new RunQueues(
  redis,
  resolveQueueOptions({
    prefix: settings.queuePrefix,
    infraAttempts: settings.jobAttempts,
    infraBackoffMs: settings.retryBackoffMs,
    notifyAttempts: settings.notifyAttempts,
    notifyBackoffMs: settings.notifyBackoffMs,
  }),
  logger,
  plainRedis,
);
// Traces only when the OTEL_* variables ask for them (README, "Watching runs").
const tracing = await startRunTracing({ serviceName: "overseer-coordinator" });
if (tracing) logger.info("exporting run traces over OpenTelemetry (OTEL_* variables)");
const coordinator = new Coordinator(
  {
    db: database.db,
    notifications: database.notifications,
    workerConnection,
    queues,
    live: new LiveChannel(plainRedis, resolveLiveOptions({ prefix: settings.queuePrefix })),
    logger,
    tracing,
  },
  resolveCoordinatorOptions({
    id: process.env.OVERSEER_COORDINATOR_ID || undefined,
    leaseTtlMs: settings.leaseTtlMs,
    reconcileIntervalMs: settings.reconcileIntervalMs,
    reconcileBatch: settings.reconcileBatch,
    prefix: settings.queuePrefix,
    resultConcurrency: settings.resultConcurrency,
    resultAttempts: settings.resultAttempts,
    resultRetryMs: settings.resultRetryMs,
    maxPlanTasks: settings.maxImportTasks,
    forgeConcurrency: settings.forgeConcurrency,
    forgeRetryBaseMs: settings.forgeRetryBaseMs,
    githubWriteIntervalMs: settings.githubWriteIntervalMs,
    dashboardUrl: settings.dashboardUrl ?? null,
    notifyConcurrency: settings.notifyConcurrency,
    notifyAttempts: settings.notifyAttempts,
    notifyTimeoutMs: settings.notifyTimeoutMs,
    intakePollMs: settings.intakePollMs,
    intakeConcurrency: settings.intakeConcurrency,
    slackBotToken: settings.slackBotToken,
    slackApiUrl: settings.slackApiUrl,
  }),
);
await coordinator.start();
// Liveness for container health checks, then a graceful stop on SIGTERM/SIGINT.
runUntilSignalled({
  service: "coordinator",
  heartbeatIntervalMs: settings.heartbeatIntervalMs,
  logger,
  graceMs: settings.shutdownGraceMs,
  // Most of the grace for what is in flight, the rest for releasing leases and connections.
  stop: () => coordinator.stop(Math.floor(settings.shutdownGraceMs * 0.6)),
  release: async () => {
    await queues.close();
    redis.disconnect();
    workerConnection.disconnect();
    plainRedis.disconnect();
    await tracing
      ?.shutdown()
      .catch((error) => logger.warn({ err: error }, "trace export at shutdown failed"));
    // Bounded: a pool close can wait on a query that started as the signal arrived.
    await Promise.race([database.close(), delay(Math.floor(settings.shutdownGraceMs * 0.2))]);
  },
});
