export {
  boundedPieces,
  DEFAULT_LIVE_LOG_BYTES,
  DEFAULT_LIVE_LOG_ENTRIES,
  LiveChannel,
  type LiveEvent,
  type LiveOptions,
} from "./live-channel.ts";
export * from "./queue-names.ts";
export { createRedis, type Redis } from "./redis-connection.ts";
export { type QueueOptions, RunQueues } from "./run-queue.ts";
export { type WorkerHeartbeat, WorkerRegistry } from "./worker-registry.ts";
