import { githubRegistration } from "./github-registration.ts";
import { gitlabRegistration } from "./gitlab-registration.ts";
import { jiraRegistration } from "./jira-adapter.ts";
import { linearRegistration } from "./linear-adapter.ts";
import type {
  TrackerAdapter,
  TrackerConnection,
  TrackerKind,
  TrackerRegistration,
  TrackerWebhookVerifier,
} from "./tracker-adapter.ts";
import { TRACKER_KINDS } from "./tracker-adapter.ts";

export type { TrackerConnection, TrackerRegistration } from "./tracker-adapter.ts";

/**
 * Every registered adapter, one line each. An adapter module exports its TrackerRegistration and
 * adds it here; nothing else in intake names a tracker.
 */
const REGISTRATIONS: readonly TrackerRegistration[] = [
  githubRegistration,
  gitlabRegistration,
  linearRegistration,
  jiraRegistration,
];

function registrationOf(kind: TrackerKind): TrackerRegistration {
  const found = REGISTRATIONS.find((registration) => registration.kind === kind);
  if (found === undefined) {
    const known = REGISTRATIONS.map((registration) => registration.kind);
    throw new Error(
      `no tracker adapter for "${kind}" is built in (registered: ${known.join(", ") || "none"}; ` +
        `kinds: ${TRACKER_KINDS.join(", ")}); use one of the registered kinds`,
    );
  }
  return found;
}

/** The adapter for a connection's tracker. */
export function createTrackerAdapter(connection: TrackerConnection): TrackerAdapter {
  return registrationOf(connection.kind).create(connection);
}

/** The webhook verifier of a tracker. */
export function trackerWebhookVerifier(kind: TrackerKind): TrackerWebhookVerifier {
  return registrationOf(kind).webhook;
}

/** The kinds that have an adapter registered. */
export function registeredTrackerKinds(): TrackerKind[] {
  return REGISTRATIONS.map((registration) => registration.kind);
}
