export { sql } from "kysely";
export { type ConnectOptions, connectDatabase, type Db, type DbHandle, json } from "./connection.ts";
export type * from "./database-schema.ts";
export { DB_DEFAULTS } from "./db-defaults.ts";
export {
  ConflictError,
  isSerializationFailure,
  isUniqueViolation,
  LeaseLostError,
  NotFoundError,
  ProjectStatusRefusedError,
} from "./db-errors.ts";
export * from "./decision-repository.ts";
export * from "./event-repository.ts";
export * from "./fleet-queries.ts";
export * from "./forge-delivery-repository.ts";
export { getForgeDelivery, type TaskRunLine, taskRunLines } from "./forge-runner-queries.ts";
export {
  type ActiveRunSummary,
  countEventsByType,
  countRunOutcomes,
  type DurationBuckets,
  latestEventId,
  loadProjectStatus,
  type OpenPullRequest,
  type ProjectStatusData,
  pingDatabase,
  projectChangeToken,
  runDurationBuckets,
} from "./gateway-queries.ts";
export * from "./intake-repository.ts";
export * from "./lease-repository.ts";
export {
  LATEST_MIGRATION,
  MigrationError,
  migrateDown,
  migrateToLatest,
  pendingMigrations,
} from "./migrator.ts";
export {
  loadMissionEvidence,
  loadMissionSummaryInput,
  MISSION_EVIDENCE_LIMITS,
  type MissionEvidence,
} from "./mission-queries.ts";
export type { NotificationListener, Subscription } from "./notification-listener.ts";
export * from "./outbox-repository.ts";
export * from "./page-limits.ts";
export * from "./project-repository.ts";
export { type LoadStateOptions, loadProjectSnapshot, loadProjectState } from "./project-state-repository.ts";
export {
  countPullRequests,
  findPullRequestByBranch,
  getPullRequestRow,
  getWaitingPullRequestRow,
  listOpenPullRequests,
  loadPullRequests,
  type ProjectBuckets,
  type PullRequestPoll,
  pullRequestApiCallBuckets,
  pullRequestApiCalls,
  pullRequestFromRow,
  recordPullRequestPoll,
} from "./pull-request-repository.ts";
export {
  decisionFromRow,
  landingBranchOf,
  projectControlFromRow,
  runFromRow,
  taskFromRow,
} from "./row-mappers.ts";
export {
  type HeldRunFence,
  holdLiveRun,
  type LandedHead,
  liveRunJob,
  type RunFenceCheck,
  RunNotLiveError,
  runRefusal,
  withLiveRun,
} from "./run-fence.ts";
export type { RunReport } from "./run-report-columns.ts";
export * from "./run-repository.ts";
export {
  createScratchDatabase,
  createScratchTemplate,
  dropDatabase,
  ensureDatabaseExists,
  probeDatabase,
  SCRATCH_TEMPLATE_ENV,
  type ScratchDatabase,
  withDatabase,
} from "./scratch-database.ts";
export * from "./subscription-repository.ts";
export * from "./task-repository.ts";
export * from "./token-repository.ts";
export * from "./tracker-update-queries.ts";
export * from "./tracker-update-repository.ts";
export { getRunTranscript, listTaskTranscripts, type StoredRunTranscript } from "./transcript-repository.ts";
export {
  type CreatedRun,
  POSTGRES_NOTIFY_CHANNEL,
  type RunJobsBuilder,
  type StoredRunJob,
} from "./transition-events.ts";
export { notifyPayload, parseNotifyPayload } from "./transition-notify.ts";
export {
  type AppliedTransition,
  type ApplyOptions,
  applyTransition,
  defaultDomainContext,
  recordUsageReport,
} from "./transition-repository.ts";
