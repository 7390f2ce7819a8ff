/**
 * What a demo cluster keeps outside its processes: its own database and its Redis key prefix.
 * `npm run demo` (demo-main.ts) drops both before it starts; the browser tests'
 * demo-cluster-setup.ts drops both after the run.
 */
import { dropDatabase } from "@overseer/db";
import { createRedis } from "@overseer/queue";
import { deleteRedisKeys } from "@overseer/test-support";

/** Drops the database named in `databaseUrl` and deletes every Redis key under `prefix`. */
export async function dropDemoState(databaseUrl: string, redisUrl: string, prefix: string): Promise<void> {
  await dropDatabase(databaseUrl);
  const redis = createRedis(redisUrl);
  try {
    await deleteRedisKeys(redis, prefix);
  } finally {
    redis.disconnect();
  }
}
