/**
 * Makes sure Postgres and Redis answer for the demo. When one does not, start the locally
 * installed server if we can (the machine's own cluster with pg_ctlcluster; redis-server
 * with a data dir of our own), otherwise say exactly how to get one.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { probeDatabase } from "@overseer/db";
import { createRedis } from "@overseer/queue";

export async function postgresAnswers(url: string): Promise<boolean> {
  return probeDatabase(url, 3000).then(
    () => true,
    () => false,
  );
}

export async function redisAnswers(url: string): Promise<boolean> {
  const redis = createRedis(url, {
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    lazyConnect: true,
    connectTimeout: 3000,
  });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return check();
}

const HOW_TO = `Install and start them with Debian's packages:
    apt-get install postgresql redis-server
    pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  or with Docker:
    docker compose up -d postgres redis
  then run the demo again (DATABASE_URL and REDIS_URL point elsewhere if you prefer).`;

export async function ensureLocalServices(options: {
  databaseUrl: string;
  redisUrl: string;
  dataDir: string;
  say: (line: string) => void;
}): Promise<void> {
  const adminUrl = new URL(options.databaseUrl);
  adminUrl.pathname = "/postgres";
  if (!(await postgresAnswers(adminUrl.toString()))) {
    options.say(`Postgres does not answer at ${adminUrl.host}; trying to start the local cluster…`);
    const versions = existsSync("/etc/postgresql") ? readdirSync("/etc/postgresql") : [];
    for (const version of versions) {
      spawnSync("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"], {
        stdio: "ignore",
      });
    }
    if (!(await waitUntil(() => postgresAnswers(adminUrl.toString()), 15_000))) {
      throw new Error(`Postgres is not reachable at ${adminUrl.host} and could not be started.\n  ${HOW_TO}`);
    }
  }
  if (!(await redisAnswers(options.redisUrl))) {
    const url = new URL(options.redisUrl);
    options.say(`Redis does not answer at ${url.host}; trying to start redis-server…`);
    const dir = path.join(options.dataDir, "redis");
    mkdirSync(dir, { recursive: true });
    const started = spawnSync(
      "redis-server",
      [
        "--daemonize",
        "yes",
        "--bind",
        "127.0.0.1",
        "--port",
        url.port || "6379",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
      ],
      { stdio: "ignore" },
    );
    if (started.error || !(await waitUntil(() => redisAnswers(options.redisUrl), 10_000))) {
      throw new Error(`Redis is not reachable at ${url.host} and could not be started.\n  ${HOW_TO}`);
    }
  }
}
