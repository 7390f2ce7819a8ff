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
import { TrackerCredentialsError } from "./tracker-retry.ts";

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

/** What an intake source (its row in Postgres) names for its adapter. */
export interface TrackerSourceRef {
  readonly id: string;
  readonly kind: TrackerKind;
  /** The host environment variable holding the token. */
  readonly token_env: string;
  readonly base_url: string | null;
}

/**
 * The source's token variable is unset or empty on this host: no attempt can succeed until an
 * operator sets it, so callers fail at once (a dead letter, a 503) instead of retrying.
 */
export class TrackerTokenNotSetError extends TrackerCredentialsError {
  override readonly name: string = "TrackerTokenNotSetError";
  readonly tokenEnv: string;

  constructor(source: TrackerSourceRef) {
    super(
      `intake source ${source.id}: the environment variable ${source.token_env} is not set (or is empty) on this host; ` +
        `set it to the ${source.kind} token where the coordinator and the gateway run, then restart them`,
    );
    this.tokenEnv = source.token_env;
  }
}

/** How the host paces a source's adapter (the service's settings). */
export interface TrackerPacing {
  /** GitHub: least ms between two writes (`OVERSEER_GITHUB_WRITE_INTERVAL_MS`). Default 1000. */
  readonly githubWriteIntervalMs?: number;
}

/**
 * A source's tracker adapter (the coordinator's intake and status, the gateway's dry run), bound to
 * the source's container, its token read from the host environment variable the source names.
 */
export function sourceAdapterOf(
  source: TrackerSourceRef,
  container: string,
  env: Readonly<Record<string, string | undefined>>,
  pacing: TrackerPacing = {},
): TrackerAdapter {
  const token = env[source.token_env];
  if (token === undefined || token.trim() === "") throw new TrackerTokenNotSetError(source);
  return createTrackerAdapter({
    kind: source.kind,
    container,
    token,
    ...(source.base_url ? { baseUrl: source.base_url } : {}),
    ...pacing,
  });
}
