import { randomBytes } from "node:crypto";
import pg from "pg";
import { connectDatabase, type DbHandle } from "./connection.ts";
import { migrateToLatest } from "./migrator.ts";

export interface ScratchDatabase extends DbHandle {
  url: string;
  name: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database with a random name on the server of `baseUrl`, for test
 * isolation (each suite gets its own, so suites run repeatedly and in parallel) and for
 * benchmarks.
 */
export async function createScratchDatabase(
  baseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  prefix = "overseer_test",
): Promise<ScratchDatabase> {
  // Under `vitest run`, OVERSEER_TEST_RUN tags the names so the leak check (test/support/leak-check.ts)
  // finds this run's leftovers and never another run's.
  const run = process.env.OVERSEER_TEST_RUN;
  const name = `${prefix}_${run ? `${run}_` : ""}${randomBytes(5).toString("hex")}`;
  await withAdmin(baseUrl, (admin) => admin.query(`CREATE DATABASE "${name}"`));
  const url = withDatabase(baseUrl, name);
  const handle = connectDatabase(url, { applicationName: name });
  await migrateToLatest(handle.db);
  return {
    ...handle,
    url,
    name,
    drop: async () => {
      await handle.close();
      await dropDatabase(url);
    },
  };
}

/** Creates the database named in `url` if it does not exist (first run of the demo, CLI). */
export async function ensureDatabaseExists(url: string): Promise<void> {
  const name = new URL(url).pathname.replace(/^\//, "") || "postgres";
  try {
    await withAdmin(url, async (admin) => {
      const { rows } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (rows.length === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    });
  } catch (error) {
    if ((error as { code?: string }).code !== "42P04") throw error;
  }
}

/** Drops the database named in `url`, closing its connections first; nothing when it does not exist. */
export async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.replace(/^\//, "");
  await withAdmin(url, (admin) =>
    admin.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`),
  );
}

/** Resolves when the server of `url` answers a query within `timeoutMs`; throws its error otherwise. */
export async function probeDatabase(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Runs `work` on a one-off connection to the server's `postgres` database. */
async function withAdmin<T>(url: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: withDatabase(url, "postgres") });
  admin.on("error", () => undefined);
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end().catch(() => undefined);
  }
}
