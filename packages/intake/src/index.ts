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
  createTrackerAdapter,
  registeredTrackerKinds,
  type TrackerConnection,
  type TrackerRegistration,
  trackerWebhookVerifier,
} from "./tracker-registry.ts";
