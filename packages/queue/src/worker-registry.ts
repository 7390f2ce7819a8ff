import { DEFAULT_POOL } from "@overseer/run-contract";
import { QUEUE_DEFAULTS } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";

export interface WorkerHeartbeat {
  id: string;
  host: string;
  pid: number;
  slots: number;
  /** The worker pools it serves (one slot budget for all); absent in a heartbeat from before pools: `default`. */
  pools: string[];
  /** Stopping: it takes no new job, so it does not count as a worker of its pools. */
  draining: boolean;
  sandbox: string;
  unsafe: boolean;
  currentJobs: { runId: string; projectId: string; taskId: string; action: string; since: number }[];
  startedAt: number;
  heartbeatAt: number;
}

/**
 * Worker heartbeats, kept in one Redis hash; entries older than `staleAfterMs` are dropped on
 * read. Beside them, the drains an operator asked for (`overseer workers drain`), one field per
 * worker, which each worker reads with its own heartbeat (same round trip).
 */
export class WorkerRegistry {
  private readonly key: string;
  private readonly drainKey: string;

  constructor(
    private readonly redis: Redis,
    prefix: string = QUEUE_DEFAULTS.prefix,
  ) {
    this.key = `${prefix}:workers`;
    this.drainKey = `${prefix}:workers:drain`;
  }

  /** Stores the heartbeat; answers whether an operator asked this worker to drain. */
  async beat(heartbeat: WorkerHeartbeat): Promise<{ drainRequested: boolean }> {
    // Both sent at once (one round trip) as plain commands, not a MULTI: each is retried on its
    // own by the client through a Redis Cluster or Sentinel failover (MOVED, TRYAGAIN, a new
    // primary), where a transaction aborted mid-failover would fail the heartbeat.
    const [, asked] = await Promise.all([
      this.redis.hset(this.key, heartbeat.id, JSON.stringify(heartbeat)),
      this.redis.hexists(this.drainKey, heartbeat.id),
    ]);
    return { drainRequested: asked === 1 };
  }

  /** Asks the worker to drain (seen at its next heartbeat): it takes no new job, finishes its runs and stops. */
  async requestDrain(workerId: string, now = Date.now()): Promise<void> {
    await this.redis.hset(this.drainKey, workerId, String(now));
  }

  /** Its heartbeat and any drain asked of it: a worker that stopped. */
  async remove(workerId: string): Promise<void> {
    await Promise.all([this.redis.hdel(this.key, workerId), this.redis.hdel(this.drainKey, workerId)]);
  }

  async list(staleAfterMs: number, now = Date.now()): Promise<WorkerHeartbeat[]> {
    const all = await this.redis.hgetall(this.key);
    const live: WorkerHeartbeat[] = [];
    const stale: string[] = [];
    for (const [id, raw] of Object.entries(all)) {
      try {
        const hb = JSON.parse(raw) as WorkerHeartbeat;
        if (now - hb.heartbeatAt > staleAfterMs) stale.push(id);
        else live.push({ ...hb, pools: hb.pools ?? [DEFAULT_POOL], draining: hb.draining ?? false });
      } catch {
        stale.push(id);
      }
    }
    if (stale.length > 0) await this.redis.hdel(this.key, ...stale);
    return live.sort((a, b) => a.id.localeCompare(b.id));
  }
}

/**
 * The pools some live worker takes jobs for now (draining workers take none), from the
 * heartbeats `WorkerRegistry.list` returned: a project whose pool is not among them waits
 * for a worker in its pool.
 */
export function servedPools(workers: readonly Pick<WorkerHeartbeat, "pools" | "draining">[]): Set<string> {
  const served = new Set<string>();
  for (const worker of workers) if (!worker.draining) for (const pool of worker.pools) served.add(pool);
  return served;
}

/** "waiting for a worker in pool jdk" when no live worker serves `pool`, else null. */
export function poolWaiting(pool: string, served: ReadonlySet<string>): string | null {
  return served.has(pool) ? null : `waiting for a worker in pool ${pool}`;
}
