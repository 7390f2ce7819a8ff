import { type LiveChannel, type Redis, subscribeWhenReady } from "@overseer/queue";
import type { Logger } from "@overseer/runtime";

/** Called with each message of the channel (a wake-up for event streams, entries for transcripts). */
type Listener = (message: string) => void;

/**
 * One Redis subscriber connection shared by every project event stream of this gateway.
 * Channels are subscribed while at least one stream listens to them. A message is only a
 * wake-up: the streams read the events themselves from Postgres after their cursor, so a
 * message lost while Redis was away costs latency (until the next safety poll), never an
 * event. After a reconnection every listener is woken to catch up.
 */
export class ProjectEventSubscriber {
  private connection: Redis | null = null;
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Pending or confirmed SUBSCRIBE per channel; every caller waits for the confirmation. */
  private readonly subscribed = new Map<string, Promise<unknown>>();

  constructor(
    private readonly redis: Redis,
    private readonly live: LiveChannel,
    private readonly logger: Logger,
  ) {}

  /** Listens to a project's live events; resolves once Redis confirmed the subscription. */
  subscribe(projectId: string, listener: () => void): Promise<() => void> {
    return this.subscribeChannel(this.live.eventsChannel(projectId), () => listener());
  }

  /**
   * Listens to a project's live transcript entries (`{ runId, entries }` JSON, published by the
   * workers as runs go); resolves once Redis confirmed the subscription.
   */
  subscribeTranscripts(projectId: string, listener: (message: string) => void): Promise<() => void> {
    return this.subscribeChannel(this.live.transcriptChannel(projectId), listener);
  }

  private async subscribeChannel(channel: string, listener: Listener): Promise<() => void> {
    const connection = this.ensureConnection();
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    set.add(listener);
    const ready = this.subscribed.get(channel) ?? subscribeWhenReady(connection, channel);
    this.subscribed.set(channel, ready);
    const unsubscribe = () => {
      const current = this.listeners.get(channel);
      if (!current?.delete(listener) || current.size > 0) return;
      this.listeners.delete(channel);
      this.subscribed.delete(channel);
      // After its SUBSCRIBE, which waits out a handshake, so never ahead of it; and not when a
      // stream listens to the channel again meanwhile (its own SUBSCRIBE keeps it).
      void ready
        .catch(() => undefined)
        .then(() => {
          if (!this.listeners.has(channel)) return connection.unsubscribe(channel);
        })
        .catch(() => undefined);
    };
    try {
      await ready;
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  /**
   * Wakes a project's streams without a Redis message: the gateway calls it for each Postgres
   * NOTIFY, so a change made where no Redis is at hand (the CLI) reaches watchers at once.
   */
  wake(projectId: string): void {
    for (const listener of this.listeners.get(this.live.eventsChannel(projectId)) ?? []) listener("");
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = null;
    this.listeners.clear();
    this.subscribed.clear();
    if (connection) connection.disconnect();
  }

  private ensureConnection(): Redis {
    if (this.connection) return this.connection;
    const connection = this.redis.duplicate();
    connection.on("message", (channel: string, message: string) => {
      for (const listener of this.listeners.get(channel) ?? []) listener(message);
    });
    let readyBefore = false;
    connection.on("ready", () => {
      if (readyBefore)
        for (const [channel, set] of this.listeners)
          if (!channel.startsWith(this.live.transcriptChannel(""))) for (const listener of set) listener("");
      readyBefore = true;
    });
    connection.on("error", (error) => this.logger.warn({ err: error }, "event subscriber connection error"));
    this.connection = connection;
    return connection;
  }
}
