/**
 * The coordinator's side of the results stream (packages/queue result-stream.ts): reads new
 * entries in batches on its own blocking connection, applies up to `concurrency` at once, and
 * acknowledges each entry only once it was applied. An entry whose application failed stays
 * pending and is taken again by `retryStale` (every reconcile round) once idle for
 * `retryAfterMs`, by this replica or, if this one died, by another.
 */
import type { Redis, ResultEntry, ResultStream } from "@overseer/queue";
import type { Logger } from "@overseer/runtime";
import { settlesBy } from "./scheduling-rules.ts";

export interface ResultConsumerOptions {
  /** Consumer name in the group: the coordinator's id. */
  consumer: string;
  /** Results applied at once (`OVERSEER_RESULT_CONCURRENCY`). */
  concurrency: number;
  /** An unacknowledged entry idle this long is taken again. */
  retryAfterMs: number;
  /** Longest wait of one blocking read; also the longest a stop waits for the reader. */
  blockMs?: number;
}

export class ResultConsumer {
  private readonly inFlight = new Map<string, Promise<void>>();
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  private freed: (() => void) | null = null;
  private connection: Redis | null = null;

  constructor(
    private readonly stream: ResultStream,
    /** Opens the dedicated connection the blocking reads hold (at start). */
    private readonly connect: () => Redis,
    private readonly apply: (message: unknown) => Promise<void>,
    private readonly logger: Logger,
    private readonly options: ResultConsumerOptions,
  ) {}

  start(): void {
    const connection = this.connect();
    // Refused connections while Redis is away are retried by the client; reads log their errors.
    connection.on("error", () => undefined);
    this.connection = connection;
    this.loop = this.run(connection);
  }

  /** Entries left unacknowledged (failed, or held by a dead replica) are applied again. */
  async retryStale(): Promise<void> {
    if (this.stopped) return;
    const room = this.options.concurrency - this.inFlight.size;
    if (room <= 0) return;
    try {
      const stale = await this.stream.claimStale(this.options.consumer, this.options.retryAfterMs, room);
      for (const entry of stale) this.dispatch(entry);
    } catch (error) {
      this.logger.warn({ err: error }, "cannot claim unapplied results; next round");
    }
  }

  /**
   * Stops reading; waits for the applications in flight until `deadline` (those still going are
   * left pending: another replica takes them once idle). Returns whether all settled in time.
   */
  async stop(deadline: number): Promise<boolean> {
    this.stopped = true;
    this.freed?.();
    // Ends a blocking read at once; an entry it was being handed stays pending for others.
    this.connection?.disconnect();
    await this.loop.catch(() => undefined);
    // settlesBy waits for all when there is no deadline (setTimeout would clamp Infinity to 1 ms).
    return settlesBy(Promise.allSettled([...this.inFlight.values()]), deadline);
  }

  private async run(connection: Redis): Promise<void> {
    const blockMs = this.options.blockMs ?? 2000;
    await this.stream.ensureGroup().catch((error) => this.logger.warn({ err: error }, "results group"));
    while (!this.stopped) {
      const room = this.options.concurrency - this.inFlight.size;
      if (room <= 0) {
        await new Promise<void>((resolve) => {
          this.freed = resolve;
        });
        continue;
      }
      try {
        const entries = await this.stream.read(connection, this.options.consumer, room, blockMs);
        for (const entry of entries) this.dispatch(entry);
      } catch (error) {
        if (this.stopped) return;
        this.logger.warn({ err: error }, "reading run results failed; retrying in a second");
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  private dispatch(entry: ResultEntry): void {
    if (this.inFlight.has(entry.id)) return;
    const work = this.apply(entry.message)
      .then(() => this.stream.ack(entry.id))
      .catch((error) =>
        this.logger.warn(
          { err: error, entry: entry.id },
          "run result not applied; it is taken again after the retry delay",
        ),
      )
      .finally(() => {
        this.inFlight.delete(entry.id);
        const freed = this.freed;
        this.freed = null;
        freed?.();
      });
    this.inFlight.set(entry.id, work);
  }
}
