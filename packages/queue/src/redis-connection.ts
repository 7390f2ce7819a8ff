import { Cluster, type RedisOptions, Redis as RedisServer } from "ioredis";

/**
 * A connection to Overseer's Redis in any of its forms: one server, a primary found through
 * Sentinel, or a Redis Cluster. Both classes share every command; BullMQ takes either.
 */
export type Redis = RedisServer | Cluster;

/**
 * Where Redis is (the `REDIS_*` settings). `url` alone: one server. With `clusterNodes`: a
 * Redis Cluster seeded by those nodes, `url` giving only the scheme (`rediss:` for TLS), user
 * and password. With `sentinels`: the primary named `sentinelMaster` as the Sentinels report
 * it, `url` giving the scheme, user, password and database.
 */
export interface RedisTarget {
  readonly url: string;
  readonly clusterNodes?: readonly string[];
  readonly sentinels?: readonly string[];
  readonly sentinelMaster?: string;
}

/** The target the service settings describe. */
export function redisTarget(settings: {
  readonly redisUrl: string;
  readonly redisClusterNodes: readonly string[];
  readonly redisSentinels: readonly string[];
  readonly redisSentinelMaster: string;
}): RedisTarget {
  return {
    url: settings.redisUrl,
    clusterNodes: settings.redisClusterNodes,
    sentinels: settings.redisSentinels,
    sentinelMaster: settings.redisSentinelMaster,
  };
}

/** Where the target points, for logs and diagnostics (no credentials). */
export function describeRedisTarget(target: string | RedisTarget): string {
  const t = typeof target === "string" ? { url: target } : target;
  if (t.clusterNodes?.length) return `Redis Cluster ${t.clusterNodes.join(",")}`;
  if (t.sentinels?.length)
    return `Sentinel primary ${t.sentinelMaster ?? "mymaster"} via ${t.sentinels.join(",")}`;
  return new URL(t.url).host;
}

/**
 * BullMQ workers block on Redis, so their connections must not give up on a request
 * (`maxRetriesPerRequest: null`). Reconnects back off up to 2 s. A primary demoted by a
 * failover answers writes with READONLY: the connection then reconnects (to the new primary,
 * which Sentinel or the cluster names) and sends the command again.
 *
 * Connection errors (refused while Redis starts or is away, reset) are the client's to retry,
 * and every command they fail reports its own error to its caller, who logs it: the client's
 * 'error' event has a listener that drops it, else ioredis prints each one to stderr beside the
 * service's logs ("[ioredis] Unhandled error event"), and a Cluster's unheard 'error' throws.
 * A caller that wants the events adds a listener of its own.
 */
export function createRedis(target: string | RedisTarget, options: RedisOptions = {}): Redis {
  const client = connect(target, options);
  client.on("error", () => undefined);
  return client;
}

function connect(target: string | RedisTarget, options: RedisOptions): Redis {
  const t = typeof target === "string" ? { url: target } : target;
  const url = new URL(t.url);
  const common: RedisOptions = {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    reconnectOnError: (error) => (error.message.startsWith("READONLY") ? 2 : false),
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === "rediss:" ? { tls: {} } : {}),
  };
  if (t.clusterNodes && t.clusterNodes.length > 0) {
    return new Cluster(t.clusterNodes.map(hostPort), {
      redisOptions: { ...common, ...options },
      clusterRetryStrategy: options.retryStrategy ?? ((times) => Math.min(times * 100, 2000)),
      enableReadyCheck: true,
      lazyConnect: options.lazyConnect ?? false,
      // ioredis takes maxRetriesPerRequest from redisOptions; a request waits out a failover.
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
    });
  }
  if (t.sentinels && t.sentinels.length > 0) {
    const db = Number(url.pathname.slice(1) || 0);
    return new RedisServer({
      ...common,
      sentinels: t.sentinels.map(hostPort),
      name: t.sentinelMaster ?? "mymaster",
      db,
      // No failoverDetector: its +switch-master handler can end a connection for good when it
      // fires while a reconnect is under way (ioredis 5 sets the status to "end"). A dead primary
      // closes the connection, and a demoted one answers READONLY (above): both reconnect through
      // the Sentinels, which name the new primary.
      sentinelRetryStrategy: (times) => Math.min(times * 100, 2000),
      ...options,
    });
  }
  return new RedisServer(t.url, { ...common, ...options });
}

function hostPort(entry: string): { host: string; port: number } {
  const at = entry.lastIndexOf(":");
  return { host: entry.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(entry.slice(at + 1)) };
}
