/**
 * GitLab issues (gitlab.com and self-managed) through gitbeaker, bound to one project (its full
 * path, `group/sub/project`, or numeric id): ids are issue iids. States are GitLab's `opened` and
 * `closed`, reported and set as `open` and `closed`. Blockers come from the issue's links of
 * type `is_blocked_by` (GitLab Premium; on Free every link is `relates_to` and none blocks).
 * A rate limit (429) or a server error is retried after `Retry-After` or a backoff; a refused
 * token fails at once naming what to fix.
 */
import type { IssueLinks, IssueNotes, Issues, Users } from "@gitbeaker/rest";
import { GitLabApiError, gitlabIssueRequesterFn } from "./gitlab-issue-requester.ts";
import {
  type GitLabIssue,
  GitLabIssueLinkSchema,
  GitLabIssueSchema,
  GitLabNoteSchema,
  GitLabUserSchema,
  gitlabLabelNames,
} from "./gitlab-issue-schemas.ts";
import type {
  IntakeQuery,
  TrackerAdapter,
  TrackerComment,
  TrackerConnection,
  TrackerIssue,
} from "./tracker-adapter.ts";
import { DEFAULT_RETRY, type Failure, type RetryPolicy, withRetry } from "./tracker-retry.ts";

const PER_PAGE = 100;

function classify(error: unknown): Failure {
  if (!(error instanceof GitLabApiError)) return { kind: "retry" };
  if (error.status === 401)
    return {
      kind: "credentials",
      message: `GitLab refused the intake token (401): give a project or group access token with the api scope and at least the Reporter role (Developer to close issues and set labels). ${error.message}`,
    };
  if (error.status === 429 || error.status >= 500)
    return {
      kind: "retry",
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    };
  return { kind: "fatal" };
}

interface GitLabIssueApi {
  issues: InstanceType<typeof Issues<false>>;
  notes: InstanceType<typeof IssueNotes<false>>;
  links: InstanceType<typeof IssueLinks<false>>;
  users: InstanceType<typeof Users<false>>;
}

export class GitLabIssuesAdapter implements TrackerAdapter {
  readonly kind = "gitlab" as const;
  readonly #project: string;
  readonly #retry: RetryPolicy;
  readonly #connect: () => Promise<GitLabIssueApi>;
  #api: Promise<GitLabIssueApi> | undefined;
  #me: Promise<string> | null = null;

  constructor(connection: TrackerConnection, retry: RetryPolicy = DEFAULT_RETRY) {
    const project = connection.container?.trim() ?? "";
    if (!project)
      throw new Error(
        'GitLab intake needs the project as its container (its full path such as "group/app", or its numeric id)',
      );
    this.#project = project;
    this.#retry = retry;
    // gitbeaker is loaded at the first call, so a gateway whose projects use no GitLab never
    // holds it (and every GC does not mark it).
    this.#connect = async () => {
      const [gitbeaker, requesterFn] = await Promise.all([
        import("@gitbeaker/rest"),
        gitlabIssueRequesterFn(connection.fetch ?? fetch),
      ]);
      const config = {
        host: (connection.baseUrl ?? "https://gitlab.com").replace(/\/+$/, ""),
        token: connection.token,
        requesterFn,
      };
      return {
        issues: new gitbeaker.Issues(config),
        notes: new gitbeaker.IssueNotes(config),
        links: new gitbeaker.IssueLinks(config),
        users: new gitbeaker.Users(config),
      };
    };
  }

  /** The API clients, built once; a failed load is retried at the next call. */
  #apiOnce(): Promise<GitLabIssueApi> {
    this.#api ??= this.#connect();
    this.#api.catch(() => {
      this.#api = undefined;
    });
    return this.#api;
  }

  async #call<T>(call: (api: GitLabIssueApi) => Promise<T>): Promise<T> {
    const api = await this.#apiOnce();
    return withRetry(this.#retry, classify, () => call(api));
  }

  async listIssues(query: IntakeQuery, since?: string | null): Promise<TrackerIssue[]> {
    const states = (query.states ?? []).map((s) => stateOf(s));
    const state = states.length === 0 ? "opened" : states.every((s) => s === "closed") ? "closed" : "all";
    const raw = await this.#call((api) =>
      api.issues.all({
        projectId: this.#project,
        state,
        perPage: PER_PAGE,
        orderBy: "updated_at",
        sort: "asc",
        ...(query.labels && query.labels.length > 0 ? { labels: query.labels.join(",") } : {}),
        ...(query.assignee ? { assigneeUsername: [query.assignee] } : {}),
        ...(since ? { updatedAfter: since } : {}),
      }),
    );
    const issues = raw.map((item) => GitLabIssueSchema.parse(item));
    const wanted = states.length === 0 ? issues : issues.filter((i) => states.includes(stateOf(i.state)));
    return Promise.all(wanted.map((issue) => this.#toIssue(issue)));
  }

  async getIssue(id: string): Promise<TrackerIssue | null> {
    try {
      const data = await this.#call((api) => api.issues.show(issueIid(id), { projectId: this.#project }));
      return this.#toIssue(GitLabIssueSchema.parse(data));
    } catch (error) {
      if (error instanceof GitLabApiError && error.status === 404) return null;
      throw error;
    }
  }

  async listComments(
    id: string,
    cursor: string | null,
  ): Promise<{ comments: TrackerComment[]; cursor: string | null }> {
    const after = cursor === null ? 0 : Number(cursor);
    const me = await this.whoAmI();
    const comments = (await this.#allNotes(id))
      .filter((n) => !n.system && n.id > after)
      .sort((a, b) => a.id - b.id)
      .map((n) => ({
        id: String(n.id),
        author: n.author.username,
        body: n.body,
        createdAt: n.created_at,
        byBot: n.author.username === me,
      }));
    return { comments, cursor: comments.at(-1)?.id ?? cursor };
  }

  async comment(id: string, body: string, marker: string): Promise<{ id: string; created: boolean }> {
    const found = (await this.#allNotes(id)).find((n) => !n.system && n.body.includes(marker));
    if (found) return { id: String(found.id), created: false };
    const data = await this.#call((api) =>
      api.notes.create(this.#project, issueIid(id), `${body}\n\n${marker}`),
    );
    return { id: String(GitLabNoteSchema.parse(data).id), created: true };
  }

  async setState(id: string, state: string): Promise<void> {
    const wanted = stateOf(state);
    if (wanted !== "open" && wanted !== "closed")
      throw new Error(
        `GitLab issues are "open" or "closed", not ${JSON.stringify(state)}; fix the status map`,
      );
    const current = await this.#existing(id);
    if (current.state === wanted) return;
    await this.#call((api) =>
      api.issues.edit(this.#project, issueIid(id), {
        stateEvent: wanted === "closed" ? "close" : "reopen",
      }),
    );
  }

  async setLabels(id: string, add: readonly string[], remove: readonly string[]): Promise<void> {
    const current = await this.#existing(id);
    const adding = add.filter((label) => !current.labels.includes(label));
    const removing = remove.filter((label) => current.labels.includes(label) && !add.includes(label));
    if (adding.length === 0 && removing.length === 0) return;
    await this.#call((api) =>
      api.issues.edit(this.#project, issueIid(id), {
        ...(adding.length > 0 ? { addLabels: adding.join(",") } : {}),
        ...(removing.length > 0 ? { removeLabels: removing.join(",") } : {}),
      }),
    );
  }

  whoAmI(): Promise<string> {
    this.#me ??= this.#call((api) => api.users.showCurrentUser())
      .then((data) => GitLabUserSchema.parse(data).username)
      .catch((error: unknown) => {
        this.#me = null;
        throw error;
      });
    return this.#me;
  }

  async #existing(id: string): Promise<TrackerIssue> {
    const current = await this.getIssue(id);
    if (current === null) throw new Error(`GitLab issue ${this.#project}#${id} does not exist`);
    return current;
  }

  async #allNotes(id: string) {
    const raw = await this.#call((api) =>
      api.notes.all(this.#project, issueIid(id), { sort: "asc", orderBy: "created_at", perPage: PER_PAGE }),
    );
    return raw.map((n) => GitLabNoteSchema.parse(n));
  }

  /** Open issues of the same project this one `is_blocked_by`; none where GitLab has no such links. */
  async #blockedBy(issue: GitLabIssue): Promise<string[]> {
    try {
      const raw = await this.#call((api) => api.links.all(this.#project, issue.iid));
      return raw
        .map((link) => GitLabIssueLinkSchema.parse(link))
        .filter((link) => link.link_type === "is_blocked_by" && link.project_id === issue.project_id)
        .map((link) => String(link.iid));
    } catch (error) {
      if (error instanceof GitLabApiError && (error.status === 403 || error.status === 404)) return [];
      throw error;
    }
  }

  async #toIssue(issue: GitLabIssue): Promise<TrackerIssue> {
    const state = stateOf(issue.state);
    return {
      id: String(issue.iid),
      key: issue.references?.full ?? `${this.#project}#${issue.iid}`,
      url: issue.web_url,
      title: issue.title,
      body: issue.description ?? "",
      state,
      terminal: state === "closed",
      labels: gitlabLabelNames(issue.labels),
      assignees: (issue.assignees ?? []).map((a) => a.username),
      blockedBy: state === "closed" ? [] : await this.#blockedBy(issue),
      updatedAt: issue.updated_at,
    };
  }
}

/** GitLab's `opened` is `open` here; other names pass through in lower case. */
function stateOf(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower === "opened" ? "open" : lower;
}

function issueIid(id: string): number {
  const iid = Number(id);
  if (!Number.isInteger(iid) || iid <= 0)
    throw new Error(`GitLab issue id ${JSON.stringify(id)} is not an issue iid`);
  return iid;
}
