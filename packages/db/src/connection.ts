import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { Database } from "./database-schema.ts";
import { createNotificationListener, type NotificationListener } from "./notification-listener.ts";

export type Db = Kysely<Database>;

export interface DbHandle {
  db: Db;
  /** LISTEN/NOTIFY on a dedicated connection that reconnects after it drops. */
  notifications: NotificationListener;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Pool size; default 10. */
  max?: number;
  /** application_name shown in pg_stat_activity. */
  applicationName?: string;
  /** Called when a pooled connection fails (it is discarded and the pool opens a new one). */
  onConnectionError?: (error: Error) => void;
}

/**
 * A Kysely handle on a node-postgres pool. A connection the server closes (restart,
 * pg_terminate_backend, network loss) fails the statement in flight, if any, and is then
 * discarded by the pool instead of being handed out again; the next query opens a new one.
 */
export function connectDatabase(url: string, options: ConnectOptions = {}): DbHandle {
  const applicationName = options.applicationName ?? "overseer";
  const onError = options.onConnectionError ?? (() => {});
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: applicationName,
  });
  // Without these listeners a connection error on an idle or checked-out client would be
  // an uncaught 'error' event. The pool removes an idle client that errored; a checked-out
  // one is no longer queryable and the pool removes it when it is released.
  pool.on("error", onError);
  pool.on("connect", (client) => client.on("error", onError));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const notifications = createNotificationListener(url, { applicationName, onError });
  return {
    db,
    notifications,
    close: async () => {
      await notifications.close();
      await db.destroy();
    },
  };
}

/**
 * A jsonb value for inserts and updates. node-postgres would send a JS array as a Postgres
 * array, so the value is sent as JSON text and cast.
 */
export function json(value: unknown) {
  return sql`${JSON.stringify(value)}::jsonb`;
}
