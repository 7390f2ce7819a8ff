export { listenForBullmqErrors, type QueueErrorLog } from "./bullmq-errors.ts";
export { ForgeQueue, forgeJobId } from "./forge-queue.ts";
export { type IntakeJob, IntakeQueue, intakeJobSchema } from "./intake-queue.ts";
export {
  boundedPieces,
  LiveChannel,
  type LiveEvent,
  type LiveOptions,
  type ResolvedLiveOptions,
  resolveLiveOptions,
} from "./live-channel.ts";
export { type NotifyJob, NotifyQueue, notifyJobId, notifyJobSchema } from "./notify-queue.ts";
export * from "./queue-names.ts";
export {
  createRedis,
  describeRedisTarget,
  type Redis,
  type RedisTarget,
  redisTarget,
} from "./redis-connection.ts";
export { psubscribeWhenReady, subscribeWhenReady } from "./redis-subscribe.ts";
export { type ResultEntry, ResultStream } from "./result-stream.ts";
export {
  deliveredRun,
  type QueueCounts,
  type QueueOptions,
  type ResolvedQueueOptions,
  type RunJobPolicy,
  type RunJobState,
  RunQueues,
  resolveQueueOptions,
  runJobPolicy,
} from "./run-queue.ts";
export { TrackerStatusQueue, trackerStatusJobSchema } from "./tracker-status-queue.ts";
export {
  poolWaiting,
  servedPools,
  type WorkerHeartbeat,
  WorkerRegistry,
} from "./worker-registry.ts";
