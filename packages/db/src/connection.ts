import { Kysely, sql } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";
import type { Database } from "./database-schema.ts";

export type Db = Kysely<Database>;

export interface DbHandle {
  db: Db;
  /** The underlying postgres.js client (LISTEN/NOTIFY). */
  sql: postgres.Sql;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Pool size; default 10. */
  max?: number;
  /** application_name shown in pg_stat_activity. */
  applicationName?: string;
}

export function connectDatabase(url: string, options: ConnectOptions = {}): DbHandle {
  const client = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? "overseer" },
  });
  const db = new Kysely<Database>({ dialect: new PostgresJSDialect({ postgres: client }) });
  return {
    db,
    sql: client,
    close: async () => {
      await db.destroy();
    },
  };
}

/**
 * A jsonb value for inserts and updates. postgres.js serialises a parameter the server
 * types as jsonb itself, so the value is passed as is (stringifying it first would store a
 * JSON string).
 */
export function json(value: unknown) {
  return sql`${value}::jsonb`;
}
