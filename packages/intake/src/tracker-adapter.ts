/**
 * The one interface every tracker adapter implements (GitHub Issues, GitLab issues, Linear,
 * Jira). Intake reads issues and comments through it and writes status back through it; the
 * adapters hold the tracker's kept client and its credentials, host-side only.
 */

export const TRACKER_KINDS = ["github", "gitlab", "linear", "jira"] as const;
export type TrackerKind = (typeof TRACKER_KINDS)[number];

/** What a project subscribes to; an unset field does not filter. */
export interface IntakeQuery {
  /** GitHub "owner/repo", GitLab project path, Linear team key, Jira project key. */
  readonly container: string;
  /** Every one must be on the issue. */
  readonly labels?: readonly string[];
  /** Login, username, Linear user name/email, Jira accountId. */
  readonly assignee?: string;
  /** Tracker state names that count as active (default: the tracker's open states). */
  readonly states?: readonly string[];
}

export interface TrackerIssue {
  /** Stable tracker id (GitHub/GitLab: the issue number as a string; Linear: uuid; Jira: id). */
  readonly id: string;
  /** Human reference: "acme/app#12", "group/app#3", "ENG-12", "PROJ-3". */
  readonly key: string;
  readonly url: string;
  readonly title: string;
  /** Markdown; Jira's ADF turned into text. */
  readonly body: string;
  readonly state: string;
  /** Closed / done / cancelled in the tracker. */
  readonly terminal: boolean;
  readonly labels: readonly string[];
  readonly assignees: readonly string[];
  /** Ids of issues this one is blocked by, where the tracker has such links. */
  readonly blockedBy: readonly string[];
  readonly updatedAt: string;
}

export interface TrackerComment {
  readonly id: string;
  readonly author: string;
  readonly body: string;
  readonly createdAt: string;
  /** Written by the identity Overseer acts as. */
  readonly byBot: boolean;
}

export interface TrackerAdapter {
  readonly kind: TrackerKind;
  /** Issues matching the query, updated at or after `since` when given (a poll). */
  listIssues(query: IntakeQuery, since?: string | null): Promise<TrackerIssue[]>;
  getIssue(id: string): Promise<TrackerIssue | null>;
  /** Comments after `cursor` (opaque; null = from the start), oldest first, and the next cursor. */
  listComments(
    id: string,
    cursor: string | null,
  ): Promise<{ comments: TrackerComment[]; cursor: string | null }>;
  /** Posts a comment carrying a hidden `marker`; a retried post with the same marker finds the first instead of posting twice. */
  comment(id: string, body: string, marker: string): Promise<{ id: string; created: boolean }>;
  /** Moves the issue to a state by name (GitHub/GitLab: "open" | "closed"); idempotent. */
  setState(id: string, state: string): Promise<void>;
  /** Adds and removes labels; idempotent. */
  setLabels(id: string, add: readonly string[], remove: readonly string[]): Promise<void>;
  /** The identity the credentials act as. */
  whoAmI(): Promise<string>;
}

/** A verified webhook delivery, reduced to what to re-read (payloads are never trusted for state). */
export interface TrackerWebhookEvent {
  readonly deliveryId: string;
  readonly issueId: string;
  readonly what: "issue" | "comment";
}

export interface TrackerWebhookVerifier {
  readonly kind: TrackerKind;
  /** Checks the signature (and timestamp where the scheme has one) over the raw body. */
  verify(headers: Readonly<Record<string, string | undefined>>, rawBody: string, secret: string): boolean;
  /** null when the delivery is about nothing intake cares for. */
  parse(headers: Readonly<Record<string, string | undefined>>, rawBody: string): TrackerWebhookEvent | null;
}

/**
 * How to reach one tracker, host-side. The secret is resolved by the caller (the coordinator or
 * the gateway reads the environment variable an intake source names); it never enters a sandbox.
 */
export interface TrackerConnection {
  readonly kind: TrackerKind;
  /**
   * The source's container (IntakeQuery.container). GitHub and GitLab ids are issue numbers, so
   * their adapters are bound to this repository / project (and refuse to start without it).
   */
  readonly container?: string;
  /**
   * The API base URL; unset: the tracker's public cloud (Jira Data Center and self-hosted GitLab
   * set it). GitHub: the web URL (`https://github.com` or an Enterprise Server's; the REST URL
   * is derived from it, as for the forge).
   */
  readonly baseUrl?: string;
  /** The token / API key the credentials reference resolved to. */
  readonly token: string;
  /** Jira Cloud basic auth: the account email paired with the API token. */
  readonly user?: string;
  /** The fetch to use (tests route it to a double); default: the global fetch. */
  readonly fetch?: typeof fetch;
  /**
   * GitHub: least ms between two writes (`OVERSEER_GITHUB_WRITE_INTERVAL_MS`;
   * github-write-pacing.ts). Default 1000; 0: no pacing. Other trackers: unused.
   */
  readonly githubWriteIntervalMs?: number;
}

/** What an adapter module offers: how to build its adapter and how to read its webhooks. */
export interface TrackerRegistration {
  readonly kind: TrackerKind;
  create(connection: TrackerConnection): TrackerAdapter;
  readonly webhook: TrackerWebhookVerifier;
}
