import { Kysely, PostgresDialect, type PostgresPool, sql } from "kysely";
import pg from "pg";
import type { Database } from "./database-schema.ts";
import { DB_DEFAULTS } from "./db-defaults.ts";
import { createNotificationListener, type NotificationListener } from "./notification-listener.ts";
import { isStalePreparedStatement, PreparedStatements } from "./prepared-statements.ts";

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
  /** A pooled connection idle this long is closed; default DB_DEFAULTS.poolIdleTimeoutMs. */
  idleTimeoutMs?: number;
  /** application_name shown in pg_stat_activity. */
  applicationName?: string;
  /** Called when a pooled connection fails (it is discarded and the pool opens a new one). */
  onConnectionError?: (error: Error) => void;
  /**
   * Postgres ends a session whose transaction waits this long for its client's next statement
   * (idle_in_transaction_session_timeout), releasing its locks: a client cut off mid-transaction,
   * whose connection Postgres still sees open (a half-open TCP, a proxy in between), holds its
   * row locks no longer than this. Unset: Postgres' own setting (off by default).
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * Called with the text of every statement a connection sends, transaction control included
   * (BEGIN, COMMIT): what a path costs in statements, as Postgres counts them (tests, benches).
   */
  onStatement?: (text: string) => void;
}

/**
 * A Kysely handle on a node-postgres pool. A connection the server closes (restart,
 * pg_terminate_backend, network loss) fails the statement in flight, if any, and is then
 * discarded by the pool instead of being handed out again; the next query opens a new one.
 */
export function connectDatabase(url: string, options: ConnectOptions = {}): DbHandle {
  const applicationName = options.applicationName ?? DB_DEFAULTS.applicationName;
  const onError = options.onConnectionError ?? (() => {});
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? DB_DEFAULTS.poolMax,
    idleTimeoutMillis: options.idleTimeoutMs ?? DB_DEFAULTS.poolIdleTimeoutMs,
    application_name: applicationName,
    keepAlive: true,
    keepAliveInitialDelayMillis: DB_DEFAULTS.keepAliveInitialDelayMs,
    ...(options.idleInTransactionTimeoutMs !== undefined
      ? { idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs }
      : {}),
  });
  // Without these listeners a connection error on an idle or checked-out client would be
  // an uncaught 'error' event. The pool removes an idle client that errored; a checked-out
  // one is no longer queryable and the pool removes it when it is released.
  pool.on("error", onError);
  pool.on("connect", (client) => {
    client.on("error", onError);
    markWhenBroken(client, options.onStatement);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: discardingBroken(pool) }) });
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

/** Clients whose connection failed under a statement, or that are retired (not handed out again). */
const broken = new WeakSet<pg.PoolClient>();

/**
 * True for errors that leave the connection unusable: the server ending the session
 * (SQLSTATE class 57P: shutdown, pg_terminate_backend; 25P03: its transaction sat idle past
 * idle_in_transaction_session_timeout), connection failures (class 08), and errors without a
 * SQLSTATE (socket closed, "Connection terminated unexpectedly").
 */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code !== "string" || code.startsWith("57P") || code.startsWith("08") || code === "25P03";
}

/**
 * When the server kills a session it first fails the running statement, and the socket
 * closes a moment later; a client released in between would look healthy to the pool and
 * fail the next caller. So a client is marked broken as soon as a statement fails that way.
 * Its statements go as named prepared statements (prepared-statements.ts); a connection is
 * retired the same way once it holds its bound of them, or when one went stale.
 */
function markWhenBroken(client: pg.PoolClient, onStatement?: (text: string) => void): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const prepared = new PreparedStatements();
  client.query = ((...args: unknown[]) => {
    if (onStatement) onStatement(statementText(args[0]));
    const result = query(...prepared.name(args));
    if (prepared.full) broken.add(client);
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if (isConnectionError(error) || isStalePreparedStatement(error)) broken.add(client);
      });
    }
    return result;
  }) as typeof client.query;
}

/** A query's text, whether it was given as a string or as a query config. */
function statementText(query: unknown): string {
  if (typeof query === "string") return query;
  const text = (query as { text?: unknown } | null)?.text;
  return typeof text === "string" ? text : String(query);
}

/** The pool as Kysely sees it, destroying a broken client on release instead of reusing it. */
function discardingBroken(pool: pg.Pool): PostgresPool {
  return {
    connect: async () => {
      const client = await pool.connect();
      const release = client.release;
      client.release = (error?: Error | boolean) => release(error || broken.has(client) || undefined);
      return client;
    },
    end: () => pool.end(),
  };
}

/**
 * A jsonb value for inserts and updates. node-postgres would send a JS array as a Postgres
 * array, so the value is sent as JSON text and cast.
 */
export function json(value: unknown) {
  return sql`${JSON.stringify(value)}::jsonb`;
}
