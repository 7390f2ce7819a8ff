import pg from "pg";
import { DB_DEFAULTS } from "./db-defaults.ts";

/** One LISTEN subscription; `unlisten` stops it (the last one on a channel sends UNLISTEN). */
export interface Subscription {
  unlisten(): Promise<void>;
}

/** LISTEN/NOTIFY on one dedicated connection that reconnects (and re-LISTENs) after it drops. */
export interface NotificationListener {
  /**
   * Calls `onNotify` with each payload sent on `channel`. Resolves once the server confirmed
   * the LISTEN; rejects if the first connection cannot be made. `onListen` runs on that
   * first LISTEN and again after every reconnection (notifications sent while disconnected
   * are lost, so a caller re-reads what it caches).
   */
  listen(channel: string, onNotify: (payload: string) => void, onListen?: () => void): Promise<Subscription>;
  /** Ends the connection and stops reconnecting. */
  close(): Promise<void>;
}

interface Subscriber {
  channel: string;
  onNotify: (payload: string) => void;
  onListen?: () => void;
}

export interface NotificationListenerOptions {
  applicationName?: string;
  /** First reconnection delay; doubles per failed attempt up to `maxBackoffMs`. Default 100. */
  minBackoffMs?: number;
  /** Default 5000. */
  maxBackoffMs?: number;
  /** Called with each connection error (the listener keeps reconnecting). */
  onError?: (error: Error) => void;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function createNotificationListener(
  url: string,
  options: NotificationListenerOptions = {},
): NotificationListener {
  const minBackoff = options.minBackoffMs ?? DB_DEFAULTS.listenerMinBackoffMs;
  const maxBackoff = options.maxBackoffMs ?? DB_DEFAULTS.listenerMaxBackoffMs;
  const subscribers = new Set<Subscriber>();
  let client: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let closed = false;
  let backoff = minBackoff;
  let retryTimer: NodeJS.Timeout | null = null;

  const channels = () => new Set([...subscribers].map((s) => s.channel));

  function scheduleReconnect(): void {
    if (closed || retryTimer || connecting || subscribers.size === 0) return;
    const delay = backoff;
    backoff = Math.min(backoff * 2, maxBackoff);
    retryTimer = setTimeout(() => {
      retryTimer = null;
      connect()
        .then((c) => {
          backoff = minBackoff;
          for (const s of subscribers) if (c === client) s.onListen?.();
        })
        .catch(() => scheduleReconnect());
    }, delay);
    retryTimer.unref();
  }

  function dropClient(c: pg.Client, error?: Error): void {
    if (error) options.onError?.(error);
    if (client !== c) return;
    client = null;
    c.end().catch(() => undefined);
    scheduleReconnect();
  }

  function connect(): Promise<pg.Client> {
    if (client) return Promise.resolve(client);
    if (connecting) return connecting;
    const c = new pg.Client({
      connectionString: url,
      application_name: options.applicationName ?? DB_DEFAULTS.applicationName,
      keepAlive: true,
      keepAliveInitialDelayMillis: DB_DEFAULTS.keepAliveInitialDelayMs,
    });
    c.on("error", (error) => dropClient(c, error));
    c.on("end", () => dropClient(c));
    c.on("notification", (message) => {
      for (const s of subscribers) if (s.channel === message.channel) s.onNotify(message.payload ?? "");
    });
    connecting = (async () => {
      try {
        await c.connect();
        for (const channel of channels()) await c.query(`LISTEN ${quoteIdent(channel)}`);
        if (closed) throw new Error("notification listener closed");
        client = c;
        return c;
      } catch (error) {
        c.removeAllListeners("end");
        c.on("error", () => undefined);
        await c.end().catch(() => undefined);
        throw error;
      } finally {
        connecting = null;
      }
    })();
    return connecting;
  }

  return {
    async listen(channel, onNotify, onListen) {
      if (closed) throw new Error("notification listener closed; open a new database handle");
      const subscriber: Subscriber = { channel, onNotify, ...(onListen ? { onListen } : {}) };
      const isNew = !channels().has(channel);
      subscribers.add(subscriber);
      try {
        const c = await connect();
        if (isNew) await c.query(`LISTEN ${quoteIdent(channel)}`);
      } catch (error) {
        subscribers.delete(subscriber);
        scheduleReconnect();
        throw error;
      }
      onListen?.();
      return {
        async unlisten() {
          if (!subscribers.delete(subscriber)) return;
          if (channels().has(channel) || !client) return;
          await client.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => undefined);
        },
      };
    },
    async close() {
      closed = true;
      subscribers.clear();
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = null;
      await connecting?.catch(() => undefined);
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners("end");
        await c.end().catch(() => undefined);
      }
    },
  };
}
