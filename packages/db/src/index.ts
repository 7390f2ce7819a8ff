export { connectDatabase, json, type Db, type DbHandle, type ConnectOptions } from "./connection.ts";
export type * from "./database-schema.ts";
export {
  migrateToLatest,
  migrateDown,
  pendingMigrations,
  LATEST_MIGRATION,
  MigrationError,
} from "./migrator.ts";
export {
  ConflictError,
  LeaseLostError,
  NotFoundError,
  isSerializationFailure,
  isUniqueViolation,
} from "./db-errors.ts";
export { loadProjectSnapshot, loadProjectState, type LoadStateOptions } from "./project-state-repository.ts";
export {
  applyTransition,
  defaultDomainContext,
  POSTGRES_NOTIFY_CHANNEL,
  type ApplyOptions,
  type AppliedTransition,
  type RunReport,
} from "./transition-repository.ts";
export * from "./project-repository.ts";
export * from "./task-repository.ts";
export * from "./run-repository.ts";
export * from "./event-repository.ts";
export * from "./decision-repository.ts";
export * from "./lease-repository.ts";
export * from "./token-repository.ts";
export {
  createScratchDatabase,
  ensureDatabaseExists,
  withDatabase,
  type ScratchDatabase,
} from "./scratch-database.ts";
export { taskFromRow, runFromRow, decisionFromRow, projectControlFromRow } from "./row-mappers.ts";
export {
  loadProjectStatus,
  latestEventId,
  pingDatabase,
  countRunOutcomes,
  countEventsByType,
  runDurationBuckets,
  type ActiveRunSummary,
  type ProjectStatusData,
  type DurationBuckets,
} from "./gateway-queries.ts";
