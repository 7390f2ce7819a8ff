/**
 * GitHub Issues (github.com and Enterprise Server) through Octokit, the way `@overseer/forge`
 * talks to GitHub: the throttling plugin waits what GitHub asks on a rate limit (up to
 * `maxRateLimitWaitSeconds`) and paces writes `writeIntervalMs` apart, the retry plugin retries
 * 5xx and lost connections. Ids are issue numbers of the one repository the adapter is bound
 * to; pull requests (which the issues endpoints list too) are never issues here.
 */
import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";
import { githubWriteGroups } from "@overseer/forge/github-write-pacing";
import {
  GitHubBlockerSchema,
  type GitHubIssue,
  GitHubIssueCommentSchema,
  GitHubIssueSchema,
  GitHubLoginSchema,
  labelNames,
} from "./github-issue-schemas.ts";
import type {
  IntakeQuery,
  TrackerAdapter,
  TrackerComment,
  TrackerConnection,
  TrackerIssue,
} from "./tracker-adapter.ts";

const ThrottledOctokit = Octokit.plugin(throttling, retry);
const PER_PAGE = 100;

/** The REST base of a GitHub web URL: api.github.com for github.com, `/api/v3` on Enterprise Server. */
export function githubIssuesApiUrl(webUrl: string | undefined): string {
  const url = (webUrl ?? "https://github.com").replace(/\/+$/, "");
  return /^https:\/\/(www\.)?github\.com$/.test(url) ? "https://api.github.com" : `${url}/api/v3`;
}

export interface GitHubIssuesOptions {
  /** Retries of a 5xx or lost request. Default 3. */
  readonly retries?: number;
  /** Backoff unit of the retry plugin (retry n waits n² × this). Default 1000 ms. */
  readonly retryBaseMs?: number;
  /** A rate-limit wait longer than this fails instead. Default 120 s. */
  readonly maxRateLimitWaitSeconds?: number;
  /**
   * Least ms between two writes (and writes that notify people: 3 ×), github-write-pacing.ts.
   * Default 1000, GitHub's guidance; 0: no pacing.
   */
  readonly writeIntervalMs?: number;
}

export class GitHubIssuesAdapter implements TrackerAdapter {
  readonly kind = "github" as const;
  readonly #octokit: InstanceType<typeof ThrottledOctokit>;
  readonly #owner: string;
  readonly #repo: string;
  #me: Promise<string> | null = null;

  constructor(connection: TrackerConnection, options: GitHubIssuesOptions = {}) {
    const [owner, repo, ...rest] = (connection.container ?? "").split("/");
    if (!owner || !repo || rest.length > 0)
      throw new Error(
        `GitHub intake container ${JSON.stringify(connection.container)} is not "owner/repo"; give the repository as owner/repo`,
      );
    this.#owner = owner;
    this.#repo = repo;
    const maxWait = options.maxRateLimitWaitSeconds ?? 120;
    const onLimit = (retryAfter: number, _options: unknown, _octokit: unknown, retryCount: number) =>
      retryCount < 3 && retryAfter <= maxWait;
    this.#octokit = new ThrottledOctokit({
      baseUrl: githubIssuesApiUrl(connection.baseUrl),
      auth: connection.token,
      request: connection.fetch ? { fetch: connection.fetch } : {},
      retry: {
        retries: options.retries ?? 3,
        doNotRetry: [400, 401, 403, 404, 405, 409, 410, 422, 451],
        retryAfterBaseValue: options.retryBaseMs ?? 1000,
      },
      throttle: {
        onRateLimit: onLimit,
        onSecondaryRateLimit: onLimit,
        ...githubWriteGroups(options.writeIntervalMs),
      },
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
  }

  get #where() {
    return { owner: this.#owner, repo: this.#repo };
  }

  async listIssues(query: IntakeQuery, since?: string | null): Promise<TrackerIssue[]> {
    const states = (query.states ?? []).map((s) => s.toLowerCase());
    const state = states.length === 0 ? "open" : states.every((s) => s === "closed") ? "closed" : "all";
    const raw = await this.#octokit.paginate(this.#octokit.rest.issues.listForRepo, {
      ...this.#where,
      state,
      per_page: PER_PAGE,
      ...(query.labels && query.labels.length > 0 ? { labels: query.labels.join(",") } : {}),
      ...(query.assignee ? { assignee: query.assignee } : {}),
      ...(since ? { since } : {}),
    });
    const issues = raw
      .map((item) => GitHubIssueSchema.parse(item))
      .filter((i) => i.pull_request === undefined);
    const wanted = states.length === 0 ? issues : issues.filter((i) => states.includes(i.state));
    return Promise.all(wanted.map((issue) => this.#toIssue(issue)));
  }

  async getIssue(id: string): Promise<TrackerIssue | null> {
    const number = issueNumber(id);
    try {
      const { data } = await this.#octokit.rest.issues.get({ ...this.#where, issue_number: number });
      const issue = GitHubIssueSchema.parse(data);
      return issue.pull_request === undefined ? this.#toIssue(issue) : null;
    } catch (error) {
      if (statusOf(error) === 404 || statusOf(error) === 410) return null;
      throw error;
    }
  }

  async listComments(
    id: string,
    cursor: string | null,
  ): Promise<{ comments: TrackerComment[]; cursor: string | null }> {
    const after = cursor === null ? 0 : Number(cursor);
    const me = await this.whoAmI();
    const all = await this.#allComments(id);
    const comments = all
      .filter((c) => c.id > after)
      .sort((a, b) => a.id - b.id)
      .map((c) => ({
        id: String(c.id),
        author: c.user?.login ?? "ghost",
        body: c.body ?? "",
        createdAt: c.created_at,
        byBot: c.user?.login === me,
      }));
    return { comments, cursor: comments.at(-1)?.id ?? cursor };
  }

  async comment(id: string, body: string, marker: string): Promise<{ id: string; created: boolean }> {
    const found = (await this.#allComments(id)).find((c) => (c.body ?? "").includes(marker));
    if (found) return { id: String(found.id), created: false };
    const { data } = await this.#octokit.rest.issues.createComment({
      ...this.#where,
      issue_number: issueNumber(id),
      body: `${body}\n\n${marker}`,
      // Not retried blindly: a 5xx may come after the comment was made. The caller retries the
      // whole call, which finds the first comment by its marker instead of posting a second.
      request: { retries: 0 },
    });
    return { id: String(GitHubIssueCommentSchema.parse(data).id), created: true };
  }

  async setState(id: string, state: string): Promise<void> {
    const wanted = state.toLowerCase();
    if (wanted !== "open" && wanted !== "closed")
      throw new Error(
        `GitHub issues are "open" or "closed", not ${JSON.stringify(state)}; fix the status map`,
      );
    const current = await this.getIssue(id);
    if (current === null) throw new Error(`GitHub issue ${this.#owner}/${this.#repo}#${id} does not exist`);
    if (current.state === wanted) return;
    await this.#octokit.rest.issues.update({
      ...this.#where,
      issue_number: issueNumber(id),
      state: wanted,
      ...(wanted === "closed" ? { state_reason: "completed" as const } : {}),
    });
  }

  async setLabels(id: string, add: readonly string[], remove: readonly string[]): Promise<void> {
    const current = await this.getIssue(id);
    if (current === null) throw new Error(`GitHub issue ${this.#owner}/${this.#repo}#${id} does not exist`);
    const missing = add.filter((label) => !current.labels.includes(label));
    if (missing.length > 0)
      await this.#octokit.rest.issues.addLabels({
        ...this.#where,
        issue_number: issueNumber(id),
        labels: missing,
      });
    for (const label of remove.filter((l) => current.labels.includes(l) && !add.includes(l))) {
      try {
        await this.#octokit.rest.issues.removeLabel({
          ...this.#where,
          issue_number: issueNumber(id),
          name: label,
        });
      } catch (error) {
        if (statusOf(error) !== 404) throw error;
      }
    }
  }

  whoAmI(): Promise<string> {
    this.#me ??= this.#octokit.rest.users
      .getAuthenticated()
      .then(({ data }) => GitHubLoginSchema.parse(data).login)
      .catch((error: unknown) => {
        this.#me = null;
        throw error;
      });
    return this.#me;
  }

  async #allComments(id: string) {
    const raw = await this.#octokit.paginate(this.#octokit.rest.issues.listComments, {
      ...this.#where,
      issue_number: issueNumber(id),
      per_page: PER_PAGE,
    });
    return raw.map((c) => GitHubIssueCommentSchema.parse(c));
  }

  /** The issues this one is blocked by (GitHub's issue dependencies; none where the server has no such API). */
  async #blockedBy(number: number): Promise<string[]> {
    try {
      const { data } = await this.#octokit.rest.issues.listDependenciesBlockedBy({
        ...this.#where,
        issue_number: number,
        per_page: PER_PAGE,
      });
      return data.map((b) => String(GitHubBlockerSchema.parse(b).number));
    } catch (error) {
      if (statusOf(error) === 404 || statusOf(error) === 410) return [];
      throw error;
    }
  }

  async #toIssue(issue: GitHubIssue): Promise<TrackerIssue> {
    return {
      id: String(issue.number),
      key: `${this.#owner}/${this.#repo}#${issue.number}`,
      url: issue.html_url,
      title: issue.title,
      body: issue.body ?? "",
      state: issue.state,
      terminal: issue.state === "closed",
      labels: labelNames(issue.labels),
      assignees: (issue.assignees ?? []).map((a) => a.login),
      blockedBy: issue.state === "closed" ? [] : await this.#blockedBy(issue.number),
      updatedAt: issue.updated_at,
    };
  }
}

function issueNumber(id: string): number {
  const number = Number(id);
  if (!Number.isInteger(number) || number <= 0)
    throw new Error(`GitHub issue id ${JSON.stringify(id)} is not an issue number`);
  return number;
}

function statusOf(error: unknown): number | null {
  return typeof error === "object" && error !== null && "status" in error && typeof error.status === "number"
    ? error.status
    : null;
}
