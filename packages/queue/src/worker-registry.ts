import { QUEUE_DEFAULTS } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";

export interface WorkerHeartbeat {
  id: string;
  host: string;
  pid: number;
  slots: number;
  sandbox: string;
  unsafe: boolean;
  currentJobs: { runId: string; projectId: string; taskId: string; action: string; since: number }[];
  startedAt: number;
  heartbeatAt: number;
}

/** Worker heartbeats, kept in one Redis hash; entries older than `staleAfterMs` are dropped on read. */
export class WorkerRegistry {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string = QUEUE_DEFAULTS.prefix,
  ) {
    this.key = `${prefix}:workers`;
  }

  async beat(heartbeat: WorkerHeartbeat): Promise<void> {
    await this.redis.hset(this.key, heartbeat.id, JSON.stringify(heartbeat));
  }

  async remove(workerId: string): Promise<void> {
    await this.redis.hdel(this.key, workerId);
  }

  async list(staleAfterMs: number, now = Date.now()): Promise<WorkerHeartbeat[]> {
    const all = await this.redis.hgetall(this.key);
    const live: WorkerHeartbeat[] = [];
    const stale: string[] = [];
    for (const [id, raw] of Object.entries(all)) {
      try {
        const hb = JSON.parse(raw) as WorkerHeartbeat;
        if (now - hb.heartbeatAt > staleAfterMs) stale.push(id);
        else live.push(hb);
      } catch {
        stale.push(id);
      }
    }
    if (stale.length > 0) await this.redis.hdel(this.key, ...stale);
    return live.sort((a, b) => a.id.localeCompare(b.id));
  }
}
