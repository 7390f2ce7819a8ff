import type { TrackerAdapter, TrackerKind, TrackerWebhookVerifier } from "./tracker-adapter.ts";
import { TRACKER_KINDS } from "./tracker-adapter.ts";

/**
 * How to reach one tracker, host-side. The secret is resolved by the caller (the coordinator or
 * the gateway reads the environment variable an intake source names); it never enters a sandbox.
 */
export interface TrackerConnection {
  readonly kind: TrackerKind;
  /** The API base URL; unset: the tracker's public cloud (Jira Data Center and self-hosted GitLab set it). */
  readonly baseUrl?: string;
  /** The token / API key the credentials reference resolved to. */
  readonly token: string;
  /** Jira Cloud basic auth: the account email paired with the API token. */
  readonly user?: string;
  /** The fetch to use (tests route it to a double); default: the global fetch. */
  readonly fetch?: typeof fetch;
}

/** What an adapter module offers: how to build its adapter and how to read its webhooks. */
export interface TrackerRegistration {
  readonly kind: TrackerKind;
  create(connection: TrackerConnection): TrackerAdapter;
  readonly webhook: TrackerWebhookVerifier;
}

/**
 * Every registered adapter, one line each. An adapter module exports its TrackerRegistration and
 * adds it here; nothing else in intake names a tracker.
 */
const REGISTRATIONS: readonly TrackerRegistration[] = [];

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
