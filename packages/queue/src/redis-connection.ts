import { Redis, type RedisOptions } from "ioredis";

/**
 * BullMQ workers block on Redis, so their connections must not give up on a request
 * (`maxRetriesPerRequest: null`). Reconnects back off up to 2 s.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    ...options,
  });
}

export type { Redis } from "ioredis";
