export * from "./run-job-schema.ts";
export * from "./queue-names.ts";
export { createRedis, type Redis } from "./redis-connection.ts";
export { RunQueues, type QueueOptions } from "./run-queue.ts";
export { LiveChannel, type LiveEvent, type LiveOptions } from "./live-channel.ts";
export { WorkerRegistry, type WorkerHeartbeat } from "./worker-registry.ts";
