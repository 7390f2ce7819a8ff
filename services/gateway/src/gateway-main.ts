/**
 * Entry point: `tsx services/gateway/src/gateway-main.ts`. Settings come from the environment
 * (see the README's configuration reference): it listens on OVERSEER_GATEWAY_HOST (default
 * 127.0.0.1) and OVERSEER_GATEWAY_PORT. SIGTERM/SIGINT stop gracefully: open SSE streams end,
 * in-flight requests finish, then the connections close.
 */
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { connectDatabase, ensureDatabaseExists, migrateToLatest } from "@overseer/db";
import { useProcessSpawner } from "@overseer/process";
import {
  createRedis,
  LiveChannel,
  RunQueues,
  redisTarget,
  resolveLiveOptions,
  resolveQueueOptions,
  WorkerRegistry,
} from "@overseer/queue";
import { createLogger, runUntilSignalled } from "@overseer/runtime";
import { loadSettings } from "@overseer/settings";
import { startGateway } from "./gateway-server.ts";

const settings = loadSettings();
useProcessSpawner(settings.processSpawner, settings.processSpawnerProgram);
const logger = createLogger({ name: "gateway", level: settings.logLevel });

await ensureDatabaseExists(settings.databaseUrl);
const database = connectDatabase(settings.databaseUrl, { applicationName: "overseer-gateway", max: 20 });
await migrateToLatest(database.db);
// Requests must fail fast when Redis is away (readiness says so) rather than queue forever.
const redis = createRedis(redisTarget(settings), { maxRetriesPerRequest: 2 });
const queues = new RunQueues(redis, resolveQueueOptions({ prefix: settings.queuePrefix }), logger);
const gateway = await startGateway(
  {
    db: database.db,
    redis,
    queues,
    live: new LiveChannel(redis, resolveLiveOptions({ prefix: settings.queuePrefix })),
    registry: new WorkerRegistry(redis, settings.queuePrefix),
    logger,
    notifications: database.notifications,
  },
  {
    host: settings.gatewayHost,
    port: settings.gatewayPort,
    corsOrigins: settings.corsOrigins,
    rateLimitWritesPerMinute: settings.rateLimitWritesPerMinute,
    maxBodyBytes: settings.maxBodyBytes,
    maxBodyDepth: settings.maxBodyDepth,
    maxImportTasks: settings.maxImportTasks,
    maxTitleChars: settings.maxTitleChars,
    maxOpenStreams: settings.maxOpenStreams,
    maxStreamsPerToken: settings.maxStreamsPerToken,
    maxStreamsPerAddress: settings.maxStreamsPerAddress,
    statusCacheTtlMs: settings.statusCacheTtlMs,
    fleetCacheMs: settings.fleetCacheMs,
    fleetStaleMs: settings.fleetStaleMs,
    compressMinBytes: settings.compressMinBytes,
    accessLogSample: settings.accessLogSample,
    accessLogSlowMs: settings.accessLogSlowMs,
    boardSessionTtlMs: settings.boardSessionTtlMs,
    forgeWebhookSecret: settings.forgeWebhookSecret,
    slackSigningSecret: settings.slackSigningSecret,
    slackOperators: settings.slackOperators,
    slackResponseOrigin: settings.slackResponseOrigin,
    dataDir: path.join(settings.dataDir, "gateway"),
  },
);

// Liveness without a token (/readyz also checks Postgres and Redis), then a graceful stop on SIGTERM/SIGINT.
runUntilSignalled({
  service: "gateway",
  heartbeatIntervalMs: settings.heartbeatIntervalMs,
  logger,
  graceMs: settings.shutdownGraceMs,
  stop: () => gateway.close(),
  release: async () => {
    // Bounded: a pool that cannot end cleanly must not keep the process alive.
    await Promise.race([
      Promise.all([queues.close(), database.close()]),
      delay(Math.floor(settings.shutdownGraceMs / 2)),
    ]);
    redis.disconnect();
  },
});
