import { connectDatabase, ensureDatabaseExists, LATEST_MIGRATION, migrateToLatest } from "@overseer/db";
import { parseCommandArgs } from "../arg-parser.ts";
import { settingsFrom } from "../cli-context.ts";
import { EXIT_OK } from "../cli-errors.ts";
import type { CliCommand } from "../command-registry.ts";

const usage = "overseer migrate";

/**
 * Creates the database when missing and applies every pending migration, then exits: the
 * compose cluster's one-shot `migrate` service, run before the coordinator and the gateway.
 * Idempotent; the services also migrate on start, so it is an ordering step, not a requirement.
 */
export const migrateCommand: CliCommand = {
  path: ["migrate"],
  summary: "create the database if missing and apply every pending migration",
  usage,
  async run(args, io) {
    parseCommandArgs(args, {}, usage, false);
    const settings = settingsFrom(io);
    await ensureDatabaseExists(settings.databaseUrl);
    const handle = connectDatabase(settings.databaseUrl, { max: 1, applicationName: "overseer-migrate" });
    try {
      const applied = await migrateToLatest(handle.db);
      io.out(
        applied.length === 0
          ? `schema current (${LATEST_MIGRATION})`
          : `applied ${applied.length} migration(s): ${applied.join(", ")}; schema now at ${LATEST_MIGRATION}`,
      );
      return EXIT_OK;
    } finally {
      await handle.close();
    }
  },
};
