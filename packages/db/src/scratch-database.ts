import { randomBytes } from "node:crypto";
import postgres from "postgres";
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
  const admin = postgres(withDatabase(baseUrl, "postgres"), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(baseUrl, name);
  const handle = connectDatabase(url, { applicationName: name });
  await migrateToLatest(handle.db);
  return {
    ...handle,
    url,
    name,
    drop: async () => {
      await handle.close();
      const a = postgres(withDatabase(baseUrl, "postgres"), { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/** Creates the database named in `url` if it does not exist (first run of the demo, CLI). */
export async function ensureDatabaseExists(url: string): Promise<void> {
  const name = new URL(url).pathname.replace(/^\//, "") || "postgres";
  const admin = postgres(withDatabase(url, "postgres"), { max: 1, onnotice: () => {} });
  try {
    const rows = await admin`SELECT 1 FROM pg_database WHERE datname = ${name}`;
    if (rows.length === 0) await admin.unsafe(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } catch (error) {
    if ((error as { code?: string }).code !== "42P04") throw error;
  } finally {
    await admin.end();
  }
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
