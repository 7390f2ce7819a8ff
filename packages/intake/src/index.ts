export {
  INTAKE_AS,
  INTAKE_CONFIG_DEFAULTS,
  type IntakeAs,
  type IntakeSourceConfig,
  intakeConfigOf,
  STATUS_MOMENTS,
  type StatusMap,
  type StatusMapEntry,
  type StatusMoment,
} from "./intake-config.ts";
export { type StatusContext, type StatusUpdate, statusUpdateOf } from "./status-update.ts";
export { checklistOf, type TaskDraft, taskDraftOf, taskIdOf } from "./task-draft.ts";
export type {
  IntakeQuery,
  TrackerAdapter,
  TrackerComment,
  TrackerIssue,
  TrackerKind,
  TrackerWebhookEvent,
  TrackerWebhookVerifier,
} from "./tracker-adapter.ts";
export { TRACKER_KINDS } from "./tracker-adapter.ts";
export {
  type CommentAction,
  commentActionOf,
  type IssueVerdict,
  issueVerdictOf,
  MARKER_PREFIX,
  matchesQuery,
  type TaskStanding,
} from "./tracker-change.ts";
export {
  createTrackerAdapter,
  registeredTrackerKinds,
  sourceAdapterOf,
  type TrackerConnection,
  type TrackerRegistration,
  type TrackerSourceRef,
  TrackerTokenNotSetError,
  trackerWebhookVerifier,
} from "./tracker-registry.ts";
export { TrackerCredentialsError } from "./tracker-retry.ts";
