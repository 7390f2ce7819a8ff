import type { ResultMessage } from "@overseer/run-contract";
import { execAll } from "./pipeline-exec.ts";
import { queueKeyPrefix } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";

/** One message read from the results stream: its entry id (to acknowledge) and its payload. */
export interface ResultEntry {
  id: string;
  message: unknown;
}

/** The consumer group every coordinator replica reads the results stream in. */
const GROUP = "coordinators";
/** How long a run's "result reported" marker lives: past any redelivery of its job. */
const REPORTED_TTL_SECONDS = 24 * 3600;

/**
 * The run results channel: one Redis stream that the workers append to and the coordinators
 * read as one consumer group. What BullMQ costs per job (add, fetch, finish: about fifty
 * commands with its events and markers) a stream does in three: XADD, XACK and XDEL, and a
 * blocking XREADGROUP per batch. Delivery stays at least once: an entry is acknowledged only
 * after its result was applied; one a coordinator failed to apply, or read and then died
 * with, stays pending and is claimed again (`claimStale`) once idle long enough. Applying a
 * result is idempotent by run id, so a second delivery is harmless.
 *
 * A run's result also leaves a marker (`reportedKey`, a day), so that a redelivered job whose
 * result was already reported is skipped and the reconcile sweep sees the run as reported.
 * Every key is under the queues' hash tag: one Redis Cluster slot.
 */
export class ResultStream {
  readonly key: string;
  private readonly base: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.base = `${queueKeyPrefix(prefix)}:results`;
    this.key = `${this.base}:stream`;
  }

  reportedKey(runId: string): string {
    return `${this.base}:reported:${runId}`;
  }

  failuresKey(runId: string): string {
    return `${this.base}:failures:${runId}`;
  }

  /**
   * Appends a result message: one XADD, and for a run's result the marker after it (a marker
   * never exists without its entry). A repeated report appends again; it applies once.
   */
  async report(message: ResultMessage): Promise<void> {
    const pipeline = this.redis.pipeline().xadd(this.key, "*", "m", JSON.stringify(message));
    if (message.kind === "run-result")
      pipeline.set(this.reportedKey(message.runId), "1", "EX", REPORTED_TTL_SECONDS);
    await execAll(pipeline);
  }

  /** Whether the run's result was reported (within the marker's day). */
  async reported(runId: string): Promise<boolean> {
    return (await this.redis.exists(this.reportedKey(runId))) === 1;
  }

  /** Creates the consumer group (and the stream) unless it exists: reads start at the stream's first entry. */
  async ensureGroup(): Promise<void> {
    await this.redis.xgroup("CREATE", this.key, GROUP, "0", "MKSTREAM").catch((error: unknown) => {
      if (!String(error).includes("BUSYGROUP")) throw error;
    });
  }

  /**
   * Up to `count` new entries for `consumer`, waiting up to `blockMs` for one. `connection` is
   * a dedicated one (the read blocks it). The group is created again if Redis lost it.
   */
  async read(connection: Redis, consumer: string, count: number, blockMs: number): Promise<ResultEntry[]> {
    try {
      const reply = (await connection.xreadgroup(
        "GROUP",
        GROUP,
        consumer,
        "COUNT",
        count,
        "BLOCK",
        blockMs,
        "STREAMS",
        this.key,
        ">",
      )) as [string, [string, string[]][]][] | null;
      return entriesOf(reply?.[0]?.[1] ?? []);
    } catch (error) {
      if (!String(error).includes("NOGROUP")) throw error;
      await this.ensureGroup();
      return [];
    }
  }

  /**
   * Entries delivered but not acknowledged for at least `minIdleMs` (an application that
   * failed, a coordinator that died holding them), now given to `consumer`: up to `count`.
   */
  async claimStale(consumer: string, minIdleMs: number, count: number): Promise<ResultEntry[]> {
    const reply = (await this.redis.xautoclaim(
      this.key,
      GROUP,
      consumer,
      minIdleMs,
      "0-0",
      "COUNT",
      count,
    )) as [string, [string, string[]][]];
    return entriesOf(reply[1] ?? []);
  }

  /** The entry was applied (or given up on): acknowledged and deleted, in one round trip. */
  async ack(id: string): Promise<void> {
    await execAll(this.redis.pipeline().xack(this.key, GROUP, id).xdel(this.key, id));
  }

  /**
   * Counts one more failed application of the run's result and returns the count so far. Kept
   * beside the stream (7 days), so it survives the entry being claimed again.
   */
  async countFailure(runId: string): Promise<number> {
    const key = this.failuresKey(runId);
    const [[incrError, count] = [null, 0]] =
      (await this.redis
        .pipeline()
        .incr(key)
        .expire(key, 7 * 24 * 3600)
        .exec()) ?? [];
    if (incrError) throw incrError;
    return Number(count);
  }

  /** Entries not yet acknowledged (`active`: delivered to a coordinator) and waiting to be read. */
  async counts(): Promise<{ waiting: number; active: number }> {
    const [length, pending] = await Promise.all([
      this.redis.xlen(this.key),
      this.redis.xpending(this.key, GROUP).catch(() => [0]) as Promise<unknown[]>,
    ]);
    const active = Number(pending[0] ?? 0);
    return { waiting: Math.max(0, length - active), active };
  }

  /** Every message still in the stream, oldest first (tests, operators' inspection). */
  async messages(): Promise<unknown[]> {
    return entriesOf(await this.redis.xrange(this.key, "-", "+")).map((e) => e.message);
  }
}

function entriesOf(rows: [string, string[]][]): ResultEntry[] {
  return rows.flatMap(([id, fields]) => {
    // A claimed entry deleted meanwhile comes back without fields.
    if (!fields) return [];
    const raw = fields[fields.indexOf("m") + 1];
    try {
      return [{ id, message: JSON.parse(raw ?? "null") as unknown }];
    } catch {
      return [{ id, message: null }];
    }
  });
}
