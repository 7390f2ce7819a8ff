import { connectDatabase, type DbHandle, ensureDatabaseExists, migrateToLatest } from "@overseer/db";
import { ConfigError } from "@overseer/input-errors";
import { loadSettings, type ServiceSettings } from "@overseer/settings";
import { UsageError } from "./cli-errors.ts";
import type { CliIo } from "./cli-io.ts";

export function settingsFrom(io: CliIo): ServiceSettings {
  try {
    return loadSettings(io.env);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * Opens Postgres for a local admin verb, creating the database and applying migrations
 * when `migrate` is set (init, import), so a first `overseer init` on a fresh server works.
 */
export async function openDatabase(io: CliIo, options: { migrate?: boolean } = {}): Promise<DbHandle> {
  const settings = settingsFrom(io);
  if (options.migrate) await ensureDatabaseExists(settings.databaseUrl);
  const handle = connectDatabase(settings.databaseUrl, { max: 4, applicationName: "overseer-cli" });
  if (options.migrate) await migrateToLatest(handle.db);
  return handle;
}

export async function withDatabase<T>(
  io: CliIo,
  options: { migrate?: boolean },
  fn: (handle: DbHandle) => Promise<T>,
): Promise<T> {
  const handle = await openDatabase(io, options);
  try {
    return await fn(handle);
  } finally {
    await handle.close();
  }
}
