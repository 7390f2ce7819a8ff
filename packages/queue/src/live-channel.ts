import { execAll } from "./pipeline-exec.ts";
import { QUEUE_DEFAULTS } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";

/**
 * Live events and run logs in Redis. Only a convenience for watchers: every event is in
 * Postgres `events`, every run's (capped) output in `runs.output`, so a flushed Redis
 * loses nothing that matters. Run logs use a capped stream per run (resumable by entry id);
 * project events use pub/sub carrying the Postgres event id (resumable from Postgres).
 */
export interface LiveOptions {
  prefix?: string;
  /**
   * Bytes of output kept per run log stream, the same bound as stored output
   * (`OVERSEER_MAX_OUTPUT_BYTES`); default 1048576. Older output is trimmed first.
   */
  maxLogBytes?: number;
  /** Entries kept per run log stream (`OVERSEER_LIVE_LOG_ENTRIES`); default 256. */
  maxLogEntries?: number;
  /** Seconds a run log stream lives after its last write; default 86400. */
  logTtlSeconds?: number;
}

/** Every option after defaults: what `LiveChannel` accepts. */
export type ResolvedLiveOptions = Readonly<Required<LiveOptions>>;

/**
 * Merges options over `QUEUE_DEFAULTS` once and checks them right after (key, rule, value
 * received): each of the `maxLogEntries` entries must hold at least 16 bytes of `maxLogBytes`.
 */
export function resolveLiveOptions(options: LiveOptions = {}): ResolvedLiveOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const { prefix, maxLogBytes, maxLogEntries, logTtlSeconds } = QUEUE_DEFAULTS;
  const resolved: ResolvedLiveOptions = Object.freeze({
    prefix,
    maxLogBytes,
    maxLogEntries,
    logTtlSeconds,
    ...(defined as LiveOptions),
  });
  if (!Number.isInteger(resolved.maxLogEntries) || resolved.maxLogEntries < 1)
    throw new RangeError(`maxLogEntries must be a positive integer, received ${resolved.maxLogEntries}`);
  if (!Number.isInteger(resolved.maxLogBytes) || resolved.maxLogBytes / resolved.maxLogEntries < 16)
    throw new RangeError(
      `maxLogBytes must be an integer of at least 16 bytes per entry (${resolved.maxLogEntries} entries), received ${resolved.maxLogBytes}`,
    );
  if (!Number.isInteger(resolved.logTtlSeconds) || resolved.logTtlSeconds < 1)
    throw new RangeError(`logTtlSeconds must be a positive integer, received ${resolved.logTtlSeconds}`);
  return resolved;
}

/**
 * `text` cut into at most `maxPieces` pieces of at most `maxBytes` UTF-8 bytes each, never
 * inside a character. When it does not fit, its beginning is dropped and the first piece
 * starts with a marker giving the number of bytes skipped.
 */
export function boundedPieces(text: string, maxBytes: number, maxPieces: number): string[] {
  let bytes = Buffer.from(text, "utf8");
  const budget = maxBytes * maxPieces;
  let marker = "";
  if (bytes.length > budget) {
    const skipped = bytes.length - budget;
    marker = `[… ${skipped} bytes of live output skipped]\n`;
    let start = bytes.length - (budget - Buffer.byteLength(marker));
    while (start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start++;
    bytes = Buffer.concat([Buffer.from(marker), bytes.subarray(start)]);
  }
  const pieces: string[] = [];
  for (let offset = 0; offset < bytes.length; ) {
    let end = Math.min(bytes.length, offset + maxBytes);
    while (end < bytes.length && end > offset && ((bytes[end] as number) & 0xc0) === 0x80) end--;
    if (end === offset) end = Math.min(bytes.length, offset + maxBytes); // a character wider than maxBytes
    pieces.push(bytes.subarray(offset, end).toString("utf8"));
    offset = end;
  }
  return pieces;
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
  /** Largest entry, in bytes: entries × this stays within `maxLogBytes`. */
  private readonly maxEntryBytes: number;
  private readonly logTtl: number;

  /** Takes options resolved once by `resolveLiveOptions`. */
  constructor(
    private readonly redis: Redis,
    options: ResolvedLiveOptions,
  ) {
    this.prefix = options.prefix;
    this.maxLogEntries = options.maxLogEntries;
    this.maxEntryBytes = Math.floor(options.maxLogBytes / options.maxLogEntries);
    this.logTtl = options.logTtlSeconds;
  }

  logKey(runId: string): string {
    return `${this.prefix}:log:${runId}`;
  }

  eventsChannel(projectId: string): string {
    return `${this.prefix}:events:${projectId}`;
  }

  /** A project's live transcript entries (`run.transcript`), apart from its stored events. */
  transcriptChannel(projectId: string): string {
    return `${this.prefix}:transcript:${projectId}`;
  }

  /**
   * One run's cancellation: its `run.cancelled` event, published here too, so a worker
   * subscribes to the runs it holds instead of parsing the whole fleet's events.
   */
  cancelChannel(runId: string): string {
    return `${this.prefix}:cancel:${runId}`;
  }

  /** The run a `cancelChannel` names; null for any other channel. */
  runOfCancelChannel(channel: string): string | null {
    const head = `${this.prefix}:cancel:`;
    return channel.startsWith(head) ? channel.slice(head.length) : null;
  }

  /**
   * Appends output to the run's log stream, within its bound: the stream keeps at most
   * `maxLogEntries` entries (trimmed exactly, oldest first) of at most `maxLogBytes /
   * maxLogEntries` bytes each, so it never holds more than `maxLogBytes` of output. A chunk
   * larger than the whole bound keeps only its end, after a marker saying how much was skipped.
   */
  async appendLog(runId: string, chunk: string): Promise<void> {
    const key = this.logKey(runId);
    const pieces = boundedPieces(chunk, this.maxEntryBytes, this.maxLogEntries);
    if (pieces.length === 0) return;
    // A pipeline, not MULTI/EXEC: one round trip, and two commands fewer per chunk.
    const pipeline = this.redis.pipeline();
    for (const piece of pieces) pipeline.xadd(key, "MAXLEN", String(this.maxLogEntries), "*", "d", piece);
    await execAll(pipeline.expire(key, this.logTtl).publish(`${key}:tail`, pieces.join("")));
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

  /** A running run's transcript entries so far, as its worker parsed them (`readTranscript`). */
  transcriptKey(runId: string): string {
    return `${this.prefix}:transcript-log:${runId}`;
  }

  /**
   * Keeps entries a running run's output just completed in its live transcript list (numbered by
   * the worker's `seq`, the numbering of its stored transcript too): at most the `keep` newest
   * entries (the worker's stored bound), expiring like its log. What watchers read over HTTP
   * while the run goes; without it they would parse the live log again, numbered apart.
   */
  keepTranscript(runId: string, entries: readonly unknown[], keep: number): Promise<unknown> {
    return execAll(this.transcriptWrites(this.redis.pipeline(), runId, entries, keep));
  }

  private transcriptWrites(
    pipeline: ReturnType<Redis["pipeline"]>,
    runId: string,
    entries: readonly unknown[],
    keep: number,
  ): ReturnType<Redis["pipeline"]> {
    const key = this.transcriptKey(runId);
    return pipeline
      .rpush(key, ...entries.map((entry) => JSON.stringify(entry)))
      .ltrim(key, -Math.max(1, Math.floor(keep)), -1)
      .expire(key, this.logTtl);
  }

  /**
   * Keeps entries a running run's output just completed (`keepTranscript`), then publishes them
   * on its project's transcript channel (`{ runId, entries }`), in the same round trip after the
   * writes; a watcher that missed some reads the run's transcript over HTTP (`readTranscript`
   * while it goes) and goes on by `seq`.
   */
  async publishTranscript(
    projectId: string,
    runId: string,
    entries: readonly unknown[],
    keep: number = Number.MAX_SAFE_INTEGER,
  ): Promise<void> {
    if (entries.length === 0) return;
    const writes = this.transcriptWrites(this.redis.pipeline(), runId, entries, keep);
    await execAll(writes.publish(this.transcriptChannel(projectId), JSON.stringify({ runId, entries })));
  }

  /** The entries kept of a running run's transcript, oldest first (unvalidated JSON: callers parse). */
  async readTranscript(runId: string): Promise<unknown[]> {
    const rows = await this.redis.lrange(this.transcriptKey(runId), 0, -1);
    return rows.flatMap((row) => {
      try {
        return [JSON.parse(row) as unknown];
      } catch {
        return [];
      }
    });
  }

  /**
   * One PUBLISH per project on its channel, its events in order as one JSON array (watchers
   * take it as a wake-up and read the stored events), and each `run.cancelled` also on its
   * run's cancel channel, alone; pipelined: one round trip, no MULTI/EXEC. A transition's
   * events are one message: a PUBLISH per event cost Redis and the publisher a command each
   * (two per transition in the scale bench).
   */
  async publishEvents(events: readonly LiveEvent[]): Promise<void> {
    if (events.length === 0) return;
    const pipeline = this.redis.pipeline();
    const byProject = new Map<string, LiveEvent[]>();
    for (const e of events) {
      const list = byProject.get(e.projectId);
      if (list) list.push(e);
      else byProject.set(e.projectId, [e]);
    }
    for (const [projectId, list] of byProject)
      pipeline.publish(this.eventsChannel(projectId), JSON.stringify(list));
    for (const e of events)
      if (e.type === "run.cancelled" && e.runId)
        pipeline.publish(this.cancelChannel(e.runId), JSON.stringify(e));
    await execAll(pipeline);
  }
}
