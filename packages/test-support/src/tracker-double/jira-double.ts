/**
 * A Jira Cloud for tests: the REST v3 routes the intake adapter uses through jira.js — enhanced
 * JQL search (`GET /rest/api/3/search/jql`), issue get and edit, comments (list, add, and
 * `POST /rest/api/3/comment/list` with `expand=properties`), transitions list and do, `myself`.
 * No npm package ships Atlassian's OpenAPI document, so its answers are typed with jira.js's own
 * models (`jira.js/version3/models`: a field jira.js does not know fails to compile) and shaped
 * after the examples in Atlassian's REST reference; request bodies are checked against what those
 * operations accept (ADF documents for descriptions and comments) and a mismatch is a violation.
 *
 * Authentication as Jira Cloud does it: basic `email:api-token`, or `Bearer <token>` (a Data
 * Center personal access token, or OAuth). Anything else: 401.
 *
 * Webhooks: admin webhooks registered with a secret are signed per Atlassian's "Webhooks" page
 * (developer.atlassian.com/cloud/jira/platform/webhooks, "Secure admin webhooks"): `X-Hub-Signature:
 * sha256=<hex HMAC-SHA256 of the raw body keyed with the secret>` (the WebSub form), with the
 * delivery id in `X-Atlassian-Webhook-Identifier`.
 */
import { createHmac, randomUUID } from "node:crypto";
import type {
  Comment,
  Issue,
  PageComment,
  PageOfComments,
  SearchAndReconcileResults,
  Transitions,
  User,
} from "jira.js/version3/models";
import type { ApiAnswer, ApiHandler } from "../forge-double/double-server.ts";
import { matchesJql, parseJql } from "./jira-jql.ts";
import { TrackerDoubleBase } from "./tracker-double-base.ts";

export interface JiraDoubleUser {
  readonly accountId: string;
  readonly displayName: string;
  readonly email: string;
  readonly apiToken: string;
  readonly timeZone: string;
}

export interface JiraDoubleIssue {
  readonly id: string;
  readonly key: string;
  readonly project: string;
  summary: string;
  /** ADF. */
  description: unknown;
  status: string;
  labels: string[];
  assignee: string | null;
  /** Ids of issues that block this one ("is blocked by"). */
  blockedBy: string[];
  updated: number;
  readonly created: number;
}

interface JiraDoubleComment {
  readonly id: string;
  readonly issueId: string;
  readonly author: string;
  readonly body: unknown;
  readonly created: number;
  readonly properties: { key: string; value: unknown }[];
}

/** The default workflow: status → its category (key, name). */
const STATUSES: Record<string, { key: string; name: string; id: number }> = {
  "To Do": { key: "new", name: "To Do", id: 2 },
  "In Progress": { key: "indeterminate", name: "In Progress", id: 4 },
  "In Review": { key: "indeterminate", name: "In Progress", id: 4 },
  Done: { key: "done", name: "Done", id: 3 },
  "Won't Do": { key: "done", name: "Done", id: 3 },
};

function jiraTime(ms: number): string {
  return new Date(ms).toISOString().replace("Z", "+0000");
}

function paragraph(text: string) {
  return { type: "doc", version: 1, content: [{ type: "paragraph", content: [{ type: "text", text }] }] };
}

function isAdf(value: unknown): boolean {
  const doc = value as { type?: unknown; version?: unknown; content?: unknown };
  return doc?.type === "doc" && doc.version === 1 && Array.isArray(doc.content);
}

export class JiraDouble extends TrackerDoubleBase {
  readonly kind = "jira" as const;
  readonly users: JiraDoubleUser[] = [];
  readonly issues: JiraDoubleIssue[] = [];
  readonly comments: JiraDoubleComment[] = [];
  readonly bot: JiraDoubleUser;
  readonly human: JiraDoubleUser;
  #next = 10000;
  #clock = 0;

  private constructor() {
    super(
      (status) => ({
        errorMessages: [status === 429 ? "Rate limit exceeded." : "Internal server error"],
        errors: {},
      }),
      (body, secret, deliveryId) => ({
        "x-hub-signature": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
        "x-atlassian-webhook-identifier": deliveryId,
        "user-agent": "Atlassian Webhook HTTP Client",
      }),
    );
    this.bot = this.addUser("Overseer Bot", "Europe/Berlin");
    this.human = this.addUser("Grace Hopper", "UTC");
  }

  static async start(): Promise<JiraDouble> {
    const double = new JiraDouble();
    await double.start();
    return double;
  }

  addUser(displayName: string, timeZone: string): JiraDoubleUser {
    const user = {
      accountId: `5b10ac8d82e05b22cc7d${(this.users.length + 1).toString().padStart(4, "0")}`,
      displayName,
      email: `${displayName.toLowerCase().replace(/\s+/g, ".")}@example.test`,
      apiToken: `ATATT${randomUUID().replace(/-/g, "")}`,
      timeZone,
    };
    this.users.push(user);
    return user;
  }

  #now(): number {
    this.#clock = Math.max(Date.now(), this.#clock + 1);
    return this.#clock;
  }

  #caller(authorization: string | undefined): JiraDoubleUser | undefined {
    if (!authorization) return undefined;
    if (/^Bearer /i.test(authorization)) return this.users.find((u) => u.apiToken === authorization.slice(7));
    if (!/^Basic /i.test(authorization)) return undefined;
    const [email, token] = Buffer.from(authorization.slice(6), "base64").toString().split(":");
    return this.users.find((u) => u.email === email && u.apiToken === token);
  }

  protected async handleApi(request: Parameters<ApiHandler>[0]): Promise<ApiAnswer | null> {
    const me = this.#caller(request.headers.authorization);
    if (!me)
      return {
        status: 401,
        body: { errorMessages: ["Client must be authenticated to access this resource."], errors: {} },
      };
    const path = request.url.pathname;
    const params = request.url.searchParams;
    const route = `${request.method} ${path}`;
    try {
      if (route === "GET /rest/api/3/myself") return { status: 200, body: this.#user(me) satisfies User };
      if (route === "GET /rest/api/3/search/jql") return this.#search(params, me);
      if (route === "POST /rest/api/3/comment/list") return this.#commentList(request.body, params);
      const issueRoute = /^\/rest\/api\/3\/issue\/([^/]+)(\/comment|\/transitions)?$/.exec(path);
      if (!issueRoute) return null;
      const issue = this.issue(decodeURIComponent(issueRoute[1] ?? ""));
      if (!issue)
        return {
          status: 404,
          body: {
            errorMessages: ["Issue does not exist or you do not have permission to see it."],
            errors: {},
          },
        };
      const what = `${request.method} ${issueRoute[2] ?? ""}`;
      if (what === "GET ") return { status: 200, body: this.#issue(issue) };
      if (what === "PUT ") return this.#edit(issue, request.body);
      if (what === "GET /comment") return this.#commentsOf(issue, params);
      if (what === "POST /comment") return this.#addComment(issue, request.body, me);
      if (what === "GET /transitions") return { status: 200, body: this.#transitions(issue) };
      if (what === "POST /transitions") return this.#transition(issue, request.body);
      return null;
    } catch (error) {
      this.violation(`Jira: ${route}: ${(error as Error).message}`);
      return { status: 400, body: { errorMessages: [(error as Error).message], errors: {} } };
    }
  }

  #user(user: JiraDoubleUser): User {
    return {
      self: `${this.url}/rest/api/3/user?accountId=${user.accountId}`,
      accountId: user.accountId,
      accountType: "atlassian",
      emailAddress: user.email,
      displayName: user.displayName,
      active: true,
      timeZone: user.timeZone,
      locale: "en_US",
    };
  }

  #search(params: URLSearchParams, me: JiraDoubleUser): ApiAnswer {
    const clauses = parseJql(params.get("jql") ?? "");
    const start = Number(params.get("nextPageToken") ?? "0");
    const max = Number(params.get("maxResults") ?? "50");
    const found = this.issues
      .filter((issue) =>
        matchesJql(
          {
            project: issue.project,
            labels: issue.labels,
            assignee: issue.assignee,
            status: issue.status,
            statusCategory: STATUSES[issue.status]?.name ?? "",
            updated: issue.updated,
          },
          clauses,
          me,
        ),
      )
      .sort((a, b) => a.updated - b.updated);
    const page = found.slice(start, start + max);
    const body: SearchAndReconcileResults & { isLast: boolean } = {
      issues: page.map((i) => this.#issue(i)),
      isLast: start + max >= found.length,
      ...(start + max < found.length ? { nextPageToken: String(start + max) } : {}),
    };
    return { status: 200, body };
  }

  #issue(issue: JiraDoubleIssue): Issue {
    const category = STATUSES[issue.status];
    const assignee = this.users.find((u) => u.accountId === issue.assignee);
    return {
      id: issue.id,
      key: issue.key,
      self: `${this.url}/rest/api/3/issue/${issue.id}`,
      fields: {
        summary: issue.summary,
        description: issue.description,
        status: {
          name: issue.status,
          id: String(Object.keys(STATUSES).indexOf(issue.status) + 10000),
          statusCategory: { id: category?.id, key: category?.key, name: category?.name },
        },
        labels: [...issue.labels],
        assignee: assignee
          ? { accountId: assignee.accountId, displayName: assignee.displayName, active: true }
          : null,
        issuelinks: issue.blockedBy.map((blocker) => ({
          id: `${issue.id}-${blocker}`,
          type: { id: "10000", name: "Blocks", inward: "is blocked by", outward: "blocks" },
          inwardIssue: { id: blocker, key: this.issue(blocker)?.key },
        })),
        updated: jiraTime(issue.updated),
        created: jiraTime(issue.created),
      } as Issue["fields"],
    };
  }

  #edit(issue: JiraDoubleIssue, body: unknown): ApiAnswer {
    const update = (body as { update?: { labels?: { add?: string; remove?: string; set?: string[] }[] } })
      ?.update;
    if (!update?.labels) throw new Error("the double only edits labels through update.labels");
    for (const op of update.labels) {
      if (op.add && !issue.labels.includes(op.add)) issue.labels.push(op.add);
      if (op.remove) issue.labels = issue.labels.filter((l) => l !== op.remove);
      if (op.set) issue.labels = [...op.set];
    }
    this.#touched(issue, "jira:issue_updated");
    return { status: 204 };
  }

  #commentView(comment: JiraDoubleComment, withProperties: boolean): Comment {
    const author = this.users.find((u) => u.accountId === comment.author);
    return {
      self: `${this.url}/rest/api/3/issue/${comment.issueId}/comment/${comment.id}`,
      id: comment.id,
      author: { accountId: comment.author, displayName: author?.displayName ?? "", active: true },
      body: comment.body as Comment["body"],
      created: jiraTime(comment.created),
      updated: jiraTime(comment.created),
      jsdPublic: true,
      ...(withProperties ? { properties: comment.properties } : {}),
    };
  }

  #commentsOf(issue: JiraDoubleIssue, params: URLSearchParams): ApiAnswer {
    const all = this.comments.filter((c) => c.issueId === issue.id);
    const startAt = Number(params.get("startAt") || 0);
    const maxResults = Number(params.get("maxResults") || 50);
    const order = params.get("orderBy");
    if (order && order !== "created" && order !== "+created")
      throw new Error(`orderBy ${order} is not what the adapter should ask`);
    const page: PageOfComments = {
      startAt,
      maxResults,
      total: all.length,
      comments: all.slice(startAt, startAt + maxResults).map((c) => this.#commentView(c, false)),
    };
    return { status: 200, body: page };
  }

  #commentList(body: unknown, params: URLSearchParams): ApiAnswer {
    const ids = (body as { ids?: unknown })?.ids;
    if (!Array.isArray(ids)) throw new Error("comment/list needs { ids: number[] }");
    const wanted = new Set(ids.map(String));
    const withProperties = (params.get("expand") ?? "").split(",").includes("properties");
    const values = this.comments
      .filter((c) => wanted.has(c.id))
      .map((c) => this.#commentView(c, withProperties));
    const page: PageComment = { startAt: 0, maxResults: 1000, total: values.length, isLast: true, values };
    return { status: 200, body: page };
  }

  #addComment(issue: JiraDoubleIssue, body: unknown, me: JiraDoubleUser): ApiAnswer {
    const input = body as { body?: unknown; properties?: { key: string; value: unknown }[] };
    if (!isAdf(input?.body)) throw new Error("a v3 comment body must be an ADF document");
    const comment = this.#storeComment(issue, input.body, me, input.properties ?? []);
    return { status: 201, body: this.#commentView(comment, false) };
  }

  #transitions(issue: JiraDoubleIssue): Transitions {
    return {
      transitions: Object.entries(STATUSES)
        .filter(([name]) => name !== issue.status)
        .map(([name, category], i) => ({
          id: String(11 + i + Object.keys(STATUSES).indexOf(name) * 10),
          name: name === "Done" ? "Resolve" : `Move to ${name}`,
          to: {
            name,
            id: String(10000 + Object.keys(STATUSES).indexOf(name)),
            statusCategory: { key: category.key, name: category.name },
          },
          isAvailable: true,
        })),
    };
  }

  #transition(issue: JiraDoubleIssue, body: unknown): ApiAnswer {
    const id = (body as { transition?: { id?: string } })?.transition?.id;
    const target = this.#transitions(issue).transitions?.find((t) => t.id === id);
    if (!target?.to?.name)
      return {
        status: 400,
        body: { errorMessages: [`Transition id '${id}' is not valid for this issue.`], errors: {} },
      };
    issue.status = target.to.name;
    this.#touched(issue, "jira:issue_updated");
    return { status: 204 };
  }

  // ---- people acting in Jira ----

  issue(idOrKey: string): JiraDoubleIssue | undefined {
    return this.issues.find((i) => i.id === idOrKey || i.key === idOrKey);
  }

  fileIssue(
    project: string,
    fields: {
      summary: string;
      description?: unknown;
      labels?: string[];
      assignee?: JiraDoubleUser | null;
      status?: string;
    },
  ): JiraDoubleIssue {
    this.#next += 1;
    const now = this.#now();
    const number = this.issues.filter((i) => i.project === project).length + 1;
    const description =
      typeof fields.description === "string" ? paragraph(fields.description) : (fields.description ?? null);
    const issue: JiraDoubleIssue = {
      id: String(this.#next),
      key: `${project}-${number}`,
      project,
      summary: fields.summary,
      description,
      status: fields.status ?? "To Do",
      labels: [...(fields.labels ?? [])],
      assignee: fields.assignee?.accountId ?? null,
      blockedBy: [],
      updated: now,
      created: now,
    };
    this.issues.push(issue);
    this.#touched(issue, "jira:issue_created");
    return issue;
  }

  /** A human moves the issue to `status` (through the workflow, as the board would). */
  move(issue: JiraDoubleIssue, status: string): void {
    if (!STATUSES[status]) throw new Error(`no status ${status}`);
    issue.status = status;
    this.#touched(issue, "jira:issue_updated");
  }

  assign(issue: JiraDoubleIssue, user: JiraDoubleUser | null): void {
    issue.assignee = user?.accountId ?? null;
    this.#touched(issue, "jira:issue_updated");
  }

  link(issue: JiraDoubleIssue, blocker: JiraDoubleIssue): void {
    issue.blockedBy.push(blocker.id);
    this.#touched(issue, "jira:issue_updated");
  }

  comment(issue: JiraDoubleIssue, text: string, by: JiraDoubleUser = this.human): void {
    this.#storeComment(issue, paragraph(text), by, []);
  }

  commentsOn(
    issue: JiraDoubleIssue,
  ): { author: string; body: unknown; properties: { key: string; value: unknown }[] }[] {
    return this.comments.filter((c) => c.issueId === issue.id);
  }

  #storeComment(
    issue: JiraDoubleIssue,
    body: unknown,
    by: JiraDoubleUser,
    properties: { key: string; value: unknown }[],
  ): JiraDoubleComment {
    this.#next += 1;
    const comment = {
      id: String(this.#next),
      issueId: issue.id,
      author: by.accountId,
      body,
      created: this.#now(),
      properties,
    };
    this.comments.push(comment);
    this.deliver(
      {
        timestamp: Date.now(),
        webhookEvent: "comment_created",
        comment: this.#commentView(comment, false),
        issue: { id: issue.id, key: issue.key, self: `${this.url}/rest/api/3/issue/${issue.id}` },
      },
      randomUUID(),
    );
    return comment;
  }

  #touched(issue: JiraDoubleIssue, event: "jira:issue_created" | "jira:issue_updated"): void {
    issue.updated = this.#now();
    this.deliver(
      {
        timestamp: Date.now(),
        webhookEvent: event,
        issue_event_type_name: "issue_generic",
        issue: this.#issue(issue),
      },
      randomUUID(),
    );
  }
}
