import type { Redis } from "ioredis";

/**
 * Live events and run logs in Redis. Only a convenience for watchers: every event is in
 * Postgres `events`, every run's (capped) output in `runs.output`, so a flushed Redis
 * loses nothing that matters. Run logs use a capped stream per run (resumable by entry id);
 * project events use pub/sub carrying the Postgres event id (resumable from Postgres).
 */
export interface LiveOptions {
  prefix?: string;
  /** Entries kept per run log stream; default 5000. */
  maxLogEntries?: number;
  /** Seconds a run log stream lives after its last write; default 86400. */
  logTtlSeconds?: number;
}

export interface LiveEvent {
  id: string;
  projectId: string;
  taskId: string | null;
  runId: string | null;
  type: string;
  data: unknown;
  createdAt: string;
}

export class LiveChannel {
  readonly prefix: string;
  private readonly maxLogEntries: number;
  private readonly logTtl: number;

  constructor(
    private readonly redis: Redis,
    options: LiveOptions = {},
  ) {
    this.prefix = options.prefix ?? "overseer";
    this.maxLogEntries = options.maxLogEntries ?? 5000;
    this.logTtl = options.logTtlSeconds ?? 86_400;
  }

  logKey(runId: string): string {
    return `${this.prefix}:log:${runId}`;
  }

  eventsChannel(projectId: string): string {
    return `${this.prefix}:events:${projectId}`;
  }

  get allEventsChannel(): string {
    return `${this.prefix}:events`;
  }

  async appendLog(runId: string, chunk: string): Promise<void> {
    const key = this.logKey(runId);
    await this.redis
      .multi()
      .xadd(key, "MAXLEN", "~", String(this.maxLogEntries), "*", "d", chunk)
      .expire(key, this.logTtl)
      .publish(`${key}:tail`, chunk)
      .exec();
  }

  /** Log entries after `afterId` (`0` = from the start), up to `count`. */
  async readLog(runId: string, afterId = "0", count = 1000): Promise<{ id: string; data: string }[]> {
    const rows = await this.redis.xrange(
      this.logKey(runId),
      afterId === "0" ? "-" : `(${afterId}`,
      "+",
      "COUNT",
      count,
    );
    return rows.map(([id, fields]) => ({ id, data: fields[1] ?? "" }));
  }

  /** Blocks up to `blockMs` for entries after `afterId`. Use a dedicated connection. */
  async waitLog(
    reader: Redis,
    runId: string,
    afterId: string,
    blockMs: number,
  ): Promise<{ id: string; data: string }[]> {
    const res = await reader.xread(
      "COUNT",
      1000,
      "BLOCK",
      blockMs,
      "STREAMS",
      this.logKey(runId),
      afterId === "0" ? "0-0" : afterId,
    );
    if (!res) return [];
    return res.flatMap(([, entries]) => entries.map(([id, fields]) => ({ id, data: fields[1] ?? "" })));
  }

  async publishEvents(events: readonly LiveEvent[]): Promise<void> {
    if (events.length === 0) return;
    const multi = this.redis.multi();
    for (const e of events) {
      const message = JSON.stringify(e);
      multi.publish(this.eventsChannel(e.projectId), message);
      multi.publish(this.allEventsChannel, message);
    }
    await multi.exec();
  }
}
