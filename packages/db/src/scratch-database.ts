import { randomBytes } from "node:crypto";
import pg from "pg";
import { connectDatabase, type DbHandle } from "./connection.ts";
import { migrateToLatest, migrationsFingerprint } from "./migrator.ts";

export interface ScratchDatabase extends DbHandle {
  url: string;
  name: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/**
 * Names the migrated template database of this test run (made once by test/support/leak-check.ts):
 * copying it takes a fraction of the time running every migration on each scratch database does.
 */
export const SCRATCH_TEMPLATE_ENV = "OVERSEER_TEST_TEMPLATE_URL";

interface ScratchDatabaseOptions {
  /**
   * false: run every migration on the empty database even when a template is at hand, for the
   * tests of the migrations themselves.
   */
  template?: boolean;
}

/**
 * A fresh, migrated database with a random name on the server of `baseUrl`, for test
 * isolation (each suite gets its own, so suites run repeatedly and in parallel) and for
 * benchmarks. Under `vitest run` it is a copy of the run's template when that was migrated by
 * these same migrations on the same server.
 */
export async function createScratchDatabase(
  baseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  prefix = "overseer_test",
  options: ScratchDatabaseOptions = {},
): Promise<ScratchDatabase> {
  // Under `vitest run`, OVERSEER_TEST_RUN tags the names so the leak check (test/support/leak-check.ts)
  // finds this run's leftovers and never another run's.
  const run = process.env.OVERSEER_TEST_RUN;
  const name = `${prefix}_${run ? `${run}_` : ""}${randomBytes(5).toString("hex")}`;
  const template = options.template === false ? undefined : templateFor(baseUrl);
  await withAdmin(baseUrl, (admin) =>
    admin.query(template ? `CREATE DATABASE "${name}" TEMPLATE "${template}"` : `CREATE DATABASE "${name}"`),
  );
  const url = withDatabase(baseUrl, name);
  const handle = connectDatabase(url, { applicationName: name });
  // A copy of the template is already at these migrations (its name carries their fingerprint).
  if (!template) await migrateToLatest(handle.db);
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

/**
 * Makes the migrated template scratch databases are copied from, named after the test run and
 * the migrations' fingerprint. It takes no connections (a copy needs none on its source).
 */
export async function createScratchTemplate(
  baseUrl: string,
  prefix = "overseer_template",
): Promise<{ url: string; drop(): Promise<void> }> {
  const run = process.env.OVERSEER_TEST_RUN;
  const name = `${prefix}_${run ? `${run}_` : ""}${migrationsFingerprint()}`;
  const url = withDatabase(baseUrl, name);
  await dropDatabase(url);
  await withAdmin(baseUrl, (admin) => admin.query(`CREATE DATABASE "${name}"`));
  const handle = connectDatabase(url, { applicationName: name });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  await withAdmin(baseUrl, (admin) => admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`));
  return { url, drop: () => dropDatabase(url) };
}

/** The template named in the environment when it is on `baseUrl`'s server and of these migrations. */
function templateFor(baseUrl: string): string | undefined {
  const named = process.env[SCRATCH_TEMPLATE_ENV];
  if (!named) return undefined;
  const template = new URL(named);
  const base = new URL(baseUrl);
  const sameServer =
    template.host === base.host && template.username === base.username && template.protocol === base.protocol;
  const name = template.pathname.replace(/^\//, "");
  return sameServer && name.endsWith(`_${migrationsFingerprint()}`) ? name : undefined;
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
