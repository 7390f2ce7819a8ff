/**
 * What a demo cluster keeps outside its processes: its own database and its Redis key prefix.
 * `npm run demo` (demo-main.ts) drops both before it starts; the browser tests'
 * demo-cluster-setup.ts drops both after the run.
 */
import { createRedis } from "@overseer/queue";
import { deleteRedisKeys } from "@overseer/test-support";
import postgres from "postgres";

/** Drops the database named in `databaseUrl` and deletes every Redis key under `prefix`. */
export async function dropDemoState(databaseUrl: string, redisUrl: string, prefix: string): Promise<void> {
  const adminUrl = new URL(databaseUrl);
  adminUrl.pathname = "/postgres";
  const admin = postgres(adminUrl.toString(), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${new URL(databaseUrl).pathname.slice(1)}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  const redis = createRedis(redisUrl);
  try {
    await deleteRedisKeys(redis, prefix);
  } finally {
    redis.disconnect();
  }
}
