/**
 * Linear through `@linear/sdk`. Reads are one GraphQL query each through the SDK's client (an
 * issue with its state, labels, assignee and "blocks" relations in one round trip, where the SDK's
 * lazy models would make one request per field); writes are the SDK's own mutations
 * (`createComment`, `updateIssue`, `issueAddLabel`, `issueRemoveLabel`, `createIssueLabel`).
 * Errors are the SDK's typed LinearErrors: an authentication error names the key to fix, a rate
 * limit or a server error is retried (tracker-retry.ts).
 */
import { createHash } from "node:crypto";
import type { LinearClient, LinearError, LinearErrorType } from "@linear/sdk";
import { LinearWebhookClient } from "@linear/sdk/webhooks";
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

const ISSUE_FIELDS = `
  id identifier url title description updatedAt
  state { name type }
  team { key }
  labels(first: 100) { nodes { name } }
  assignee { id name displayName email }
  inverseRelations(first: 100) { nodes { type issue { id } } }`;

const ISSUES_QUERY = `query OverseerIssues($filter: IssueFilter, $after: String) {
  issues(filter: $filter, first: 50, after: $after) {
    nodes { ${ISSUE_FIELDS} }
    pageInfo { hasNextPage endCursor }
  }
}`;

const ISSUE_QUERY = `query OverseerIssue($id: String!) { issue(id: $id) { ${ISSUE_FIELDS} } }`;

const COMMENTS_QUERY = `query OverseerComments($id: String!, $filter: CommentFilter, $after: String) {
  issue(id: $id) {
    comments(filter: $filter, first: 50, after: $after) {
      nodes { id body createdAt user { id displayName } botActor { name } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

const TEAM_OF_ISSUE = `query OverseerIssueTeam($id: String!) {
  issue(id: $id) {
    id
    state { name }
    labels(first: 100) { nodes { id name } }
    team { id states(first: 100) { nodes { id name } } }
  }
}`;

const LABELS_QUERY = `query OverseerLabels($filter: IssueLabelFilter) {
  issueLabels(filter: $filter, first: 100) { nodes { id name team { id } } }
}`;

const COMMENT_QUERY = `query OverseerComment($id: String!) { comment(id: $id) { id } }`;

const VIEWER_QUERY = "query OverseerViewer { viewer { id displayName email } }";

/** Workflow state types Linear counts as finished. */
const TERMINAL_TYPES = new Set(["completed", "canceled", "duplicate"]);

interface IssueNode {
  id: string;
  identifier: string;
  url: string;
  title: string;
  description: string | null;
  updatedAt: string;
  state: { name: string; type: string };
  labels: { nodes: { name: string }[] };
  assignee: { id: string; name: string; displayName: string; email: string } | null;
  inverseRelations: { nodes: { type: string; issue: { id: string } }[] };
}

interface Page<T> {
  nodes: T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

interface CommentNode {
  id: string;
  body: string;
  createdAt: string;
  user: { id: string; displayName: string } | null;
  botActor: { name: string | null } | null;
}

/**
 * Every name a query's `assignee` may use for the issue's assignee: display name, full name, email,
 * and `me` when it is the token's own user (intake compares the query's assignee with these).
 */
function assigneeNames(assignee: IssueNode["assignee"], viewerId: string): string[] {
  if (!assignee) return [];
  const names = [assignee.displayName, assignee.name, assignee.email];
  return assignee.id === viewerId ? [...names, "me"] : names;
}

function toIssue(node: IssueNode, viewerId: string): TrackerIssue {
  return {
    id: node.id,
    key: node.identifier,
    url: node.url,
    title: node.title,
    body: node.description ?? "",
    state: node.state.name,
    terminal: TERMINAL_TYPES.has(node.state.type),
    labels: node.labels.nodes.map((l) => l.name),
    assignees: assigneeNames(node.assignee, viewerId),
    blockedBy: node.inverseRelations.nodes.filter((r) => r.type === "blocks").map((r) => r.issue.id),
    updatedAt: node.updatedAt,
  };
}

/** The `IssueFilter` of an intake query (and a poll's `since`). */
export function linearIssueFilter(
  query: IntakeQuery,
  since: string | null | undefined,
): Record<string, unknown> {
  const and: Record<string, unknown>[] = [{ team: { key: { eq: query.container } } }];
  for (const name of query.labels ?? []) and.push({ labels: { some: { name: { eqIgnoreCase: name } } } });
  const assignee = query.assignee;
  if (assignee === "me") and.push({ assignee: { isMe: { eq: true } } });
  else if (assignee?.includes("@")) and.push({ assignee: { email: { eqIgnoreCase: assignee } } });
  else if (assignee) {
    and.push({
      assignee: { or: [{ displayName: { eqIgnoreCase: assignee } }, { name: { eqIgnoreCase: assignee } }] },
    });
  }
  if (query.states && query.states.length > 0) and.push({ state: { name: { in: [...query.states] } } });
  else and.push({ state: { type: { nin: [...TERMINAL_TYPES] } } });
  if (since) and.push({ updatedAt: { gte: since } });
  return { and };
}

/** A UUID v4-shaped id derived from the issue and the marker: the comment's own id is the hidden marker. */
export function markerCommentId(issueId: string, marker: string): string {
  const hex = createHash("sha256").update(`${issueId}\n${marker}`).digest("hex");
  const variant = ((Number.parseInt(hex[16] ?? "0", 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** LinearErrorType's values, spelled here: the enum itself is in the SDK's module, loaded lazily. */
const ERROR_TYPE = {
  AuthenticationError: "AuthenticationError",
  Forbidden: "Forbidden",
  Ratelimited: "Ratelimited",
  InternalError: "InternalError",
  NetworkError: "NetworkError",
} as const satisfies { [K in keyof typeof LinearErrorType]?: `${(typeof LinearErrorType)[K]}` };

function classify(error: unknown): Failure {
  const type: string | undefined = (error as LinearError | undefined)?.type;
  if (type === ERROR_TYPE.AuthenticationError) {
    return {
      kind: "credentials",
      message:
        "Linear refused the API key (authentication error): the intake source's Linear token is missing, revoked " +
        "or mistyped. Create a personal API key (Linear: Settings > Security & access) or an OAuth token with " +
        "read, write and comments:create, and put it in the environment variable the source's credentials name.",
    };
  }
  if (type === ERROR_TYPE.Forbidden) {
    return {
      kind: "credentials",
      message:
        "Linear refused the request (forbidden): the intake source's Linear token lacks a right it needs; " +
        "give it read, write and comments:create and access to the team.",
    };
  }
  if (type === ERROR_TYPE.Ratelimited) {
    const seconds = (error as { retryAfter?: number }).retryAfter;
    return { kind: "retry", ...(seconds === undefined ? {} : { retryAfterMs: seconds * 1000 }) };
  }
  if (type === ERROR_TYPE.InternalError || type === ERROR_TYPE.NetworkError) return { kind: "retry" };
  return { kind: "fatal" };
}

export class LinearAdapter implements TrackerAdapter {
  readonly kind = "linear" as const;
  readonly #connect: () => Promise<LinearClient>;
  #client: Promise<LinearClient> | undefined;
  readonly #retry: RetryPolicy;
  #viewer: Promise<{ id: string; displayName: string }> | undefined;

  constructor(connection: TrackerConnection, retry: RetryPolicy = DEFAULT_RETRY) {
    const apiUrl = connection.baseUrl ? `${connection.baseUrl.replace(/\/$/, "")}/graphql` : undefined;
    // Personal API keys (lin_api_…) go bare in Authorization; OAuth tokens as Bearer.
    const auth = connection.token.startsWith("lin_api_")
      ? { apiKey: connection.token }
      : { accessToken: connection.token };
    const options = { ...auth, ...(apiUrl ? { apiUrl } : {}) };
    // @linear/sdk is a 3 MB module (~12 MB of heap): loaded at the first call, so a gateway whose
    // projects use no Linear never holds it (and every GC does not mark it).
    this.#connect = async () => new (await import("@linear/sdk")).LinearClient(options);
    this.#retry = retry;
  }

  /** The client, built once; a failed load is retried at the next call. */
  #clientOnce(): Promise<LinearClient> {
    this.#client ??= this.#connect();
    this.#client.catch(() => {
      this.#client = undefined;
    });
    return this.#client;
  }

  async #query<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    const client = await this.#clientOnce();
    return withRetry(this.#retry, classify, async () => {
      const response = await client.client.rawRequest<T, Record<string, unknown>>(query, variables);
      if (!response.data)
        throw new Error(`Linear answered without data: ${JSON.stringify(response.errors ?? [])}`);
      return response.data;
    });
  }

  async #call<T>(call: (client: LinearClient) => Promise<T>): Promise<T> {
    const client = await this.#clientOnce();
    return withRetry(this.#retry, classify, () => call(client));
  }

  async listIssues(query: IntakeQuery, since?: string | null): Promise<TrackerIssue[]> {
    const viewer = await this.#viewerOnce();
    const filter = linearIssueFilter(query, since);
    const found: TrackerIssue[] = [];
    let after: string | null = null;
    for (;;) {
      const data: { issues: Page<IssueNode> } = await this.#query(ISSUES_QUERY, { filter, after });
      found.push(...data.issues.nodes.map((node) => toIssue(node, viewer.id)));
      if (!data.issues.pageInfo.hasNextPage) return found;
      after = data.issues.pageInfo.endCursor;
    }
  }

  async getIssue(id: string): Promise<TrackerIssue | null> {
    try {
      const viewer = await this.#viewerOnce();
      const data = await this.#query<{ issue: IssueNode | null }>(ISSUE_QUERY, { id });
      return data.issue ? toIssue(data.issue, viewer.id) : null;
    } catch (error) {
      if (/not found/i.test(String((error as Error).message))) return null;
      throw error;
    }
  }

  /** The cursor is the `createdAt` of the last comment read: the next call reads only newer ones. */
  async listComments(
    id: string,
    cursor: string | null,
  ): Promise<{ comments: TrackerComment[]; cursor: string | null }> {
    const viewer = await this.#viewerOnce();
    const filter = cursor ? { createdAt: { gt: cursor } } : null;
    const nodes: CommentNode[] = [];
    let after: string | null = null;
    for (;;) {
      const data: { issue: { comments: Page<CommentNode> } } = await this.#query(COMMENTS_QUERY, {
        id,
        filter,
        after,
      });
      nodes.push(...data.issue.comments.nodes);
      if (!data.issue.comments.pageInfo.hasNextPage) break;
      after = data.issue.comments.pageInfo.endCursor;
    }
    nodes.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    const comments = nodes.map((c) => ({
      id: c.id,
      author: c.user?.displayName ?? c.botActor?.name ?? "unknown",
      body: c.body,
      createdAt: c.createdAt,
      byBot: c.user ? c.user.id === viewer.id : c.botActor !== null,
    }));
    return { comments, cursor: comments.at(-1)?.createdAt ?? cursor };
  }

  async comment(id: string, body: string, marker: string): Promise<{ id: string; created: boolean }> {
    const issue = await this.#query<{ issue: { id: string } }>(TEAM_OF_ISSUE, { id });
    const commentId = markerCommentId(issue.issue.id, marker);
    const existing = await this.#query<{ comment: { id: string } | null }>(COMMENT_QUERY, {
      id: commentId,
    }).catch((error: unknown) => {
      if (/not found/i.test(String((error as Error).message))) return { comment: null };
      throw error;
    });
    if (existing.comment) return { id: commentId, created: false };
    try {
      await this.#call((client) => client.createComment({ id: commentId, issueId: issue.issue.id, body }));
      return { id: commentId, created: true };
    } catch (error) {
      // A retried create whose first answer was lost: the comment is there under its id.
      if (/already exists/i.test(String((error as Error).message))) return { id: commentId, created: false };
      throw error;
    }
  }

  async setState(id: string, state: string): Promise<void> {
    const data = await this.#query<{ issue: TeamIssue }>(TEAM_OF_ISSUE, { id });
    if (data.issue.state.name === state) return;
    const target = data.issue.team.states.nodes.find((s) => s.name.toLowerCase() === state.toLowerCase());
    if (!target) {
      const names = data.issue.team.states.nodes.map((s) => s.name).join(", ");
      throw new Error(
        `Linear team has no workflow state "${state}" (it has: ${names}); fix the intake state map`,
      );
    }
    await this.#call((client) => client.updateIssue(data.issue.id, { stateId: target.id }));
  }

  async setLabels(id: string, add: readonly string[], remove: readonly string[]): Promise<void> {
    const data = await this.#query<{ issue: TeamIssue }>(TEAM_OF_ISSUE, { id });
    const issue = data.issue;
    const onIssue = new Map(issue.labels.nodes.map((l) => [l.name.toLowerCase(), l.id]));
    for (const name of remove) {
      const labelId = onIssue.get(name.toLowerCase());
      if (labelId) await this.#call((client) => client.issueRemoveLabel(issue.id, labelId));
    }
    const missing = add.filter((name) => !onIssue.has(name.toLowerCase()));
    if (missing.length === 0) return;
    const labels = await this.#query<{
      issueLabels: { nodes: { id: string; name: string; team: { id: string } | null }[] };
    }>(LABELS_QUERY, { filter: { name: { in: missing } } });
    for (const name of missing) {
      const usable = labels.issueLabels.nodes.find(
        (l) =>
          l.name.toLowerCase() === name.toLowerCase() && (l.team === null || l.team.id === issue.team.id),
      );
      const labelId =
        usable?.id ??
        (await this.#call(
          async (client) => (await client.createIssueLabel({ name, teamId: issue.team.id })).issueLabelId,
        ));
      if (!labelId) throw new Error(`Linear did not create the label "${name}"`);
      await this.#call((client) => client.issueAddLabel(issue.id, labelId));
    }
  }

  async whoAmI(): Promise<string> {
    return (await this.#viewerOnce()).displayName;
  }

  #viewerOnce(): Promise<{ id: string; displayName: string }> {
    this.#viewer ??= this.#query<{ viewer: { id: string; displayName: string } }>(VIEWER_QUERY, {}).then(
      (d) => d.viewer,
    );
    this.#viewer.catch(() => {
      this.#viewer = undefined;
    });
    return this.#viewer;
  }
}

interface TeamIssue {
  id: string;
  state: { name: string };
  labels: { nodes: { id: string; name: string }[] };
  team: { id: string; states: { nodes: { id: string; name: string }[] } };
}

function header(headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/**
 * Linear's webhook signature, checked by the SDK's LinearWebhookClient: `Linear-Signature` is the
 * hex HMAC-SHA256 of the raw body with the webhook's signing secret, and the body's
 * `webhookTimestamp` must be within a minute of now (a replay is refused).
 */
export const linearWebhookVerifier: TrackerWebhookVerifier = {
  kind: "linear",
  verify(headers, rawBody, secret) {
    const signature = header(headers, "linear-signature");
    if (!signature || !secret) return false;
    try {
      return new LinearWebhookClient(secret).verify(Buffer.from(rawBody), signature);
    } catch {
      return false;
    }
  },
  parse(headers, rawBody): TrackerWebhookEvent | null {
    const deliveryId = header(headers, "linear-delivery");
    let payload: { type?: unknown; data?: { id?: unknown; issueId?: unknown } };
    try {
      payload = JSON.parse(rawBody) as typeof payload;
    } catch {
      return null;
    }
    if (!deliveryId) return null;
    if (payload.type === "Issue" && typeof payload.data?.id === "string") {
      return { deliveryId, issueId: payload.data.id, what: "issue" };
    }
    if (payload.type === "Comment" && typeof payload.data?.issueId === "string") {
      return { deliveryId, issueId: payload.data.issueId, what: "comment" };
    }
    return null;
  },
};

export const linearRegistration: TrackerRegistration = {
  kind: "linear",
  create: (connection) => new LinearAdapter(connection),
  webhook: linearWebhookVerifier,
};
