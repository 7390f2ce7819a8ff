/**
 * Jira Cloud through jira.js (REST v3): enhanced JQL search (`/rest/api/3/search/jql`), issues,
 * comments with ADF bodies, transitions and `myself`. Credentials: an Atlassian account email
 * with an API token (basic), or an OAuth access token (bearer) when no email is given. Data
 * Center serves REST v2 only and is not read by this adapter yet. Terminal is the status category "Done"; "blocked by" comes from issue
 * links of the Blocks type. A comment's hidden marker is a comment property
 * (`overseer.marker`), read back with `expand=properties`.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Version3Client } from "jira.js";
import { adfToText, textToAdf } from "./jira-adf.ts";
import type {
  IntakeQuery,
  TrackerAdapter,
  TrackerComment,
  TrackerConnection,
  TrackerIssue,
  TrackerRegistration,
  TrackerWebhookEvent,
  TrackerWebhookVerifier,
} from "./tracker-adapter.ts";
import { DEFAULT_RETRY, type Failure, type RetryPolicy, withRetry } from "./tracker-retry.ts";

const FIELDS = ["summary", "description", "status", "labels", "assignee", "issuelinks", "updated"];
const MARKER_PROPERTY = "overseer.marker";

interface JiraIssue {
  id?: string;
  key?: string;
  fields?: {
    summary?: string;
    description?: unknown;
    status?: { name?: string; statusCategory?: { key?: string } };
    labels?: string[];
    assignee?: { accountId?: string; displayName?: string } | null;
    issuelinks?: { type?: { name?: string; inward?: string }; inwardIssue?: { id?: string } }[];
    updated?: string;
  };
}

/** Jira's `2026-12-04T23:55:01.123+0000` as ISO 8601 UTC. */
function isoTime(jira: string | undefined): string {
  if (!jira) return "";
  return new Date(Date.parse(jira.replace(/([+-]\d{2})(\d{2})$/, "$1:$2"))).toISOString();
}

function quote(value: string): string {
  return JSON.stringify(value);
}

/** `since` as the `yyyy/MM/dd HH:mm` JQL reads in the searching user's time zone (a minute early: JQL has minutes only). */
export function jqlMinute(since: string, timeZone: string): string {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  }).formatToParts(Date.parse(since) - 60_000);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "00";
  return `${get("year")}/${get("month")}/${get("day")} ${get("hour")}:${get("minute")}`;
}

/** The JQL of an intake query (and a poll's `since`, in the bot's time zone). */
export function jiraJql(query: IntakeQuery, since: string | null | undefined, timeZone: string): string {
  const clauses = [`project = ${quote(query.container)}`];
  for (const label of query.labels ?? []) clauses.push(`labels = ${quote(label)}`);
  if (query.assignee === "me") clauses.push("assignee = currentUser()");
  else if (query.assignee) clauses.push(`assignee = ${quote(query.assignee)}`);
  if (query.states && query.states.length > 0)
    clauses.push(`status IN (${query.states.map(quote).join(", ")})`);
  else clauses.push("statusCategory != Done");
  if (since) clauses.push(`updated >= ${quote(jqlMinute(since, timeZone))}`);
  return `${clauses.join(" AND ")} ORDER BY updated ASC`;
}

function toIssue(issue: JiraIssue, baseUrl: string, myAccountId: string): TrackerIssue {
  const fields = issue.fields ?? {};
  return {
    id: issue.id ?? "",
    key: issue.key ?? "",
    url: `${baseUrl}/browse/${issue.key ?? ""}`,
    title: fields.summary ?? "",
    body: adfToText(fields.description),
    state: fields.status?.name ?? "",
    terminal: fields.status?.statusCategory?.key === "done",
    labels: fields.labels ?? [],
    // The account id, and `me` when it is the token's own account (a query's `assignee: me`).
    assignees: fields.assignee?.accountId
      ? [fields.assignee.accountId, ...(fields.assignee.accountId === myAccountId ? ["me"] : [])]
      : [],
    blockedBy: (fields.issuelinks ?? [])
      .filter((link) => link.type?.name === "Blocks" && link.inwardIssue?.id)
      .map((link) => link.inwardIssue?.id ?? ""),
    updatedAt: isoTime(fields.updated),
  };
}

function classify(error: unknown): Failure {
  const status = (error as { status?: number })?.status;
  const headers = (error as { cause?: { response?: { headers?: Record<string, string> } } })?.cause?.response
    ?.headers;
  if (status === 401) {
    return {
      kind: "credentials",
      message:
        "Jira refused the credentials (401): the intake source's Jira token is missing, revoked or mistyped. " +
        "Create an API token (id.atlassian.com > Security > API tokens) and give the account's email as the " +
        "source's user (or, without a user, an OAuth access token), and put the token in the environment " +
        "variable the source's credentials name.",
    };
  }
  if (status === 403) {
    return {
      kind: "credentials",
      message:
        "Jira refused the request (403): the intake source's Jira account lacks a project permission it needs " +
        "(Browse projects, Add comments, Edit issues, Transition issues).",
    };
  }
  if (status === 429 || (status !== undefined && status >= 500) || status === undefined) {
    const after = Number(headers?.["retry-after"]);
    return { kind: "retry", ...(Number.isFinite(after) ? { retryAfterMs: after * 1000 } : {}) };
  }
  return { kind: "fatal" };
}

export class JiraAdapter implements TrackerAdapter {
  readonly kind = "jira" as const;
  readonly #connect: () => Promise<Version3Client>;
  #client: Promise<Version3Client> | undefined;
  readonly #baseUrl: string;
  readonly #retry: RetryPolicy;
  #me: Promise<{ accountId: string; displayName: string; timeZone: string }> | undefined;

  constructor(connection: TrackerConnection, retry: RetryPolicy = DEFAULT_RETRY) {
    if (!connection.baseUrl)
      throw new Error("a Jira intake source needs its site URL (https://your-site.atlassian.net)");
    const host = connection.baseUrl.replace(/\/$/, "");
    this.#baseUrl = host;
    // Basic auth: the email as `user`, or the token given as `email:api-token`.
    const paired = /^([^:\s]+@[^:\s]+):(.+)$/.exec(connection.token);
    const email = connection.user ?? paired?.[1];
    const apiToken = connection.user ? connection.token : (paired?.[2] ?? connection.token);
    const config: ConstructorParameters<typeof Version3Client>[0] = email
      ? { host, authentication: { basic: { email, apiToken } } }
      : { host, authentication: { oauth2: { accessToken: connection.token } } };
    // jira.js (with axios) is ~11 MB of heap: loaded at the first call, so a gateway whose
    // projects use no Jira never holds it (and every GC does not mark it).
    this.#connect = async () => new (await import("jira.js")).Version3Client(config);
    this.#retry = retry;
  }

  /** The client, built once; a failed load is retried at the next call. */
  #clientOnce(): Promise<Version3Client> {
    this.#client ??= this.#connect();
    this.#client.catch(() => {
      this.#client = undefined;
    });
    return this.#client;
  }

  async #call<T>(call: (client: Version3Client) => Promise<T>): Promise<T> {
    const client = await this.#clientOnce();
    return withRetry(this.#retry, classify, () => call(client));
  }

  #myself(): Promise<{ accountId: string; displayName: string; timeZone: string }> {
    this.#me ??= this.#call((client) => client.myself.getCurrentUser()).then((u) => ({
      accountId: u.accountId,
      displayName: u.displayName ?? u.accountId,
      timeZone: u.timeZone ?? "UTC",
    }));
    this.#me.catch(() => {
      this.#me = undefined;
    });
    return this.#me;
  }

  async listIssues(query: IntakeQuery, since?: string | null): Promise<TrackerIssue[]> {
    const me = await this.#myself();
    const jql = jiraJql(query, since, me.timeZone);
    const found: TrackerIssue[] = [];
    let nextPageToken: string | undefined;
    do {
      const token = nextPageToken;
      const page = await this.#call((client) =>
        client.issueSearch.searchForIssuesUsingJqlEnhancedSearch({
          jql,
          fields: FIELDS,
          maxResults: 50,
          ...(token ? { nextPageToken: token } : {}),
        }),
      );
      found.push(
        ...(page.issues ?? []).map((issue) => toIssue(issue as JiraIssue, this.#baseUrl, me.accountId)),
      );
      nextPageToken = page.nextPageToken;
    } while (nextPageToken);
    return found;
  }

  async getIssue(id: string): Promise<TrackerIssue | null> {
    const me = await this.#myself();
    try {
      const issue = await this.#call((client) =>
        client.issues.getIssue({ issueIdOrKey: id, fields: FIELDS }),
      );
      return toIssue(issue as JiraIssue, this.#baseUrl, me.accountId);
    } catch (error) {
      if ((error as { status?: number }).status === 404) return null;
      throw error;
    }
  }

  async #allComments(id: string) {
    const comments: {
      id?: string;
      author?: { accountId?: string; displayName?: string };
      body?: unknown;
      created?: string;
    }[] = [];
    for (;;) {
      const page = await this.#call((client) =>
        client.issueComments.getComments({
          issueIdOrKey: id,
          startAt: comments.length,
          maxResults: 100,
          orderBy: "created",
        }),
      );
      comments.push(...(page.comments ?? []));
      if ((page.comments ?? []).length === 0 || comments.length >= (page.total ?? 0)) return comments;
    }
  }

  /** The cursor is the creation time of the last comment read. */
  async listComments(
    id: string,
    cursor: string | null,
  ): Promise<{ comments: TrackerComment[]; cursor: string | null }> {
    const me = await this.#myself();
    const comments = (await this.#allComments(id))
      .map((c) => ({
        id: c.id ?? "",
        author: c.author?.displayName ?? c.author?.accountId ?? "unknown",
        body: adfToText(c.body),
        createdAt: isoTime(c.created),
        byBot: c.author?.accountId === me.accountId,
      }))
      .filter((c) => cursor === null || c.createdAt > cursor)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    return { comments, cursor: comments.at(-1)?.createdAt ?? cursor };
  }

  async comment(id: string, body: string, marker: string): Promise<{ id: string; created: boolean }> {
    const me = await this.#myself();
    const mine = (await this.#allComments(id)).filter((c) => c.author?.accountId === me.accountId && c.id);
    if (mine.length > 0) {
      const ids = mine.map((c) => Number(c.id));
      const withProperties = await this.#call((client) =>
        client.issueComments.getCommentsByIds({ ids, expand: "properties" }),
      );
      const found = (withProperties.values ?? []).find((c) =>
        (c.properties ?? []).some((p) => p.key === MARKER_PROPERTY && p.value === marker),
      );
      if (found?.id) return { id: found.id, created: false };
    }
    const created = await this.#call((client) =>
      client.issueComments.addComment({
        issueIdOrKey: id,
        comment: textToAdf(body) as never,
        properties: [{ key: MARKER_PROPERTY, value: marker }],
      }),
    );
    return { id: created.id ?? "", created: true };
  }

  async setState(id: string, state: string): Promise<void> {
    const issue = await this.getIssue(id);
    if (!issue) throw new Error(`Jira issue ${id} does not exist or the intake account cannot see it`);
    if (issue.state.toLowerCase() === state.toLowerCase()) return;
    const { transitions = [] } = await this.#call((client) =>
      client.issues.getTransitions({ issueIdOrKey: id }),
    );
    const transition = transitions.find((t) => t.to?.name?.toLowerCase() === state.toLowerCase());
    if (!transition?.id) {
      const reachable = transitions.map((t) => t.to?.name).join(", ");
      throw new Error(
        `Jira offers no transition from "${issue.state}" to "${state}" (reachable: ${reachable}); fix the intake state map or the workflow`,
      );
    }
    const transitionId = transition.id;
    await this.#call((client) =>
      client.issues.doTransition({ issueIdOrKey: id, transition: { id: transitionId } }),
    );
  }

  async setLabels(id: string, add: readonly string[], remove: readonly string[]): Promise<void> {
    const labels = [...add.map((l) => ({ add: l })), ...remove.map((l) => ({ remove: l }))];
    if (labels.length === 0) return;
    await this.#call((client) => client.issues.editIssue({ issueIdOrKey: id, update: { labels } }));
  }

  async whoAmI(): Promise<string> {
    return (await this.#myself()).accountId;
  }
}

function header(headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/**
 * Jira admin webhooks registered with a secret: `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the
 * raw body>` (Atlassian, "Webhooks: secure admin webhooks"; the WebSub signature form).
 */
export const jiraWebhookVerifier: TrackerWebhookVerifier = {
  kind: "jira",
  verify(headers, rawBody, secret) {
    const signature = header(headers, "x-hub-signature");
    if (!signature?.startsWith("sha256=") || !secret) return false;
    const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`);
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  },
  parse(headers, rawBody): TrackerWebhookEvent | null {
    const deliveryId = header(headers, "x-atlassian-webhook-identifier");
    let payload: { webhookEvent?: unknown; issue?: { id?: unknown } };
    try {
      payload = JSON.parse(rawBody) as typeof payload;
    } catch {
      return null;
    }
    const issueId = payload.issue?.id;
    if (!deliveryId || typeof issueId !== "string" || typeof payload.webhookEvent !== "string") return null;
    if (payload.webhookEvent.startsWith("jira:issue_")) return { deliveryId, issueId, what: "issue" };
    if (payload.webhookEvent.startsWith("comment_")) return { deliveryId, issueId, what: "comment" };
    return null;
  },
};

export const jiraRegistration: TrackerRegistration = {
  kind: "jira",
  create: (connection) => new JiraAdapter(connection),
  webhook: jiraWebhookVerifier,
};
