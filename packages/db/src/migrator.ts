import { createHash } from "node:crypto";
import { type Migration, type MigrationProvider, type MigrationResultSet, Migrator } from "kysely";
import type { Db } from "./connection.ts";
import * as initial from "./migrations/0001-initial-schema.ts";
import * as runsEndedIndex from "./migrations/0002-runs-ended-index.ts";
import * as missions from "./migrations/0003-missions.ts";
import * as runUsageDetail from "./migrations/0004-run-usage-detail.ts";
import * as taskLanding from "./migrations/0005-task-landing.ts";
import * as taskLandingFailures from "./migrations/0006-task-landing-failures.ts";
import * as unpricedUsage from "./migrations/0007-unpriced-usage.ts";
import * as projectRepoKind from "./migrations/0008-project-repo-kind.ts";
import * as forgeWebhookDeliveries from "./migrations/0009-forge-webhook-deliveries.ts";
import * as pullRequests from "./migrations/0010-pull-requests.ts";
import * as runTranscripts from "./migrations/0011-run-transcripts.ts";
import * as runPhases from "./migrations/0012-run-phases.ts";
import * as runImageDigest from "./migrations/0014-run-image-digest.ts";
import * as notificationOutbox from "./migrations/0015-notification-outbox.ts";
import * as leaseOwnerKey from "./migrations/0016-lease-owner-key.ts";
import * as pullRequestNotModified from "./migrations/0017-pull-request-not-modified.ts";
import * as eventsRunIndex from "./migrations/0018-events-run-index.ts";
import * as runPool from "./migrations/0019-run-pool.ts";
import * as slackMessageRef from "./migrations/0020-slack-message-ref.ts";
import * as runEnvironment from "./migrations/0021-run-environment.ts";
import * as intake from "./migrations/0022-intake.ts";
import * as trackerUpdates from "./migrations/0023-tracker-updates.ts";
import * as runSandboxDriver from "./migrations/0024-run-sandbox-driver.ts";
import * as runJobs from "./migrations/0025-run-jobs.ts";
import * as outboxDeliveredTotals from "./migrations/0026-outbox-delivered-totals.ts";
import * as runLandings from "./migrations/0027-run-landings.ts";
import * as runsProjectEndedIndex from "./migrations/0028-runs-project-ended-index.ts";

/** Migrations in order. Add new ones at the end; never edit one that has shipped. */
const MIGRATIONS: Record<string, Migration> = {
  "0001-initial-schema": initial,
  "0002-runs-ended-index": runsEndedIndex,
  "0003-missions": missions,
  "0004-run-usage-detail": runUsageDetail,
  "0005-task-landing": taskLanding,
  "0006-task-landing-failures": taskLandingFailures,
  "0007-unpriced-usage": unpricedUsage,
  "0008-project-repo-kind": projectRepoKind,
  "0009-forge-webhook-deliveries": forgeWebhookDeliveries,
  "0010-pull-requests": pullRequests,
  "0011-run-transcripts": runTranscripts,
  "0012-run-phases": runPhases,
  "0014-run-image-digest": runImageDigest,
  "0015-notification-outbox": notificationOutbox,
  "0016-lease-owner-key": leaseOwnerKey,
  "0017-pull-request-not-modified": pullRequestNotModified,
  "0018-events-run-index": eventsRunIndex,
  "0019-run-pool": runPool,
  "0020-slack-message-ref": slackMessageRef,
  "0021-run-environment": runEnvironment,
  "0022-intake": intake,
  "0023-tracker-updates": trackerUpdates,
  "0024-run-sandbox-driver": runSandboxDriver,
  "0025-run-jobs": runJobs,
  "0026-outbox-delivered-totals": outboxDeliveredTotals,
  "0027-run-landings": runLandings,
  "0028-runs-project-ended-index": runsProjectEndedIndex,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export class MigrationError extends Error {
  override readonly name = "MigrationError";
}

function migrator(db: Db): Migrator {
  return new Migrator({
    db,
    provider,
    migrationTableName: "overseer_migrations",
    migrationLockTableName: "overseer_migrations_lock",
  });
}

function check(result: MigrationResultSet): string[] {
  if (result.error) {
    const failed = result.results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new MigrationError(
      `Migration ${failed} failed: ${String((result.error as Error).message ?? result.error)}`,
    );
  }
  return (result.results ?? []).map((r) => r.migrationName);
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  return check(await migrator(db).migrateToLatest());
}

export async function migrateDown(db: Db): Promise<string[]> {
  return check(await migrator(db).migrateDown());
}

/** Names of migrations not yet applied (empty = schema current). */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const all = await migrator(db).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

export const LATEST_MIGRATION = Object.keys(MIGRATIONS).at(-1) as string;

/**
 * A hash of every migration's name and code: a database migrated by this build carries it in
 * its template's name, so a copy is never taken from a template another build of the
 * migrations made (scratch-database.ts).
 */
export function migrationsFingerprint(): string {
  const hash = createHash("sha256");
  for (const [name, m] of Object.entries(MIGRATIONS)) hash.update(`${name}\0${m.up}\0${m.down}\0`);
  return hash.digest("hex").slice(0, 12);
}
