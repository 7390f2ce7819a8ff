/**
 * A GitHub for tests (an Enterprise Server at `http://127.0.0.1:PORT`, REST under `/api/v3`,
 * GraphQL at `/api/graphql`), honest where it matters: its repositories are real git over smart
 * HTTP with branch protection enforced by a pre-receive hook in GitHub's words; every REST
 * request and response is validated against GitHub's OpenAPI description (`@octokit/openapi`)
 * and every GraphQL query is executed against GitHub's published schema
 * (`@octokit/graphql-schema`), so an adapter that sends or expects what GitHub does not makes
 * `violations` non-empty. People act through its methods: a review with inline comments, a
 * reply, a check run or a status, a merge or a close by hand.
 */

import { createHmac } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ForgeDoubleBase } from "./double-base.ts";
import type { ApiAnswer, ApiHandler } from "./double-server.ts";
import { GitHubApi } from "./github-api.ts";
import { type GitHubDoubleApp, GitHubDoubleApps } from "./github-app-auth.ts";
import { checkRoutes } from "./github-check-routes.ts";
import { GitHubBodies } from "./github-double-bodies.ts";
import { mergePull } from "./github-double-merge.ts";
import {
  type CheckRun,
  type DoubleIssue,
  type DoublePull,
  GitHubDoubleState,
  type GitHubDoubleUser,
  newDoubleIssue,
  type Review,
  type Thread,
} from "./github-double-state.ts";
import { issueRoutes } from "./github-issue-routes.ts";
import { GitHubOpenApi } from "./github-openapi.ts";
import { pullRoutes } from "./github-pull-routes.ts";
import { GitHubWebhookEvents } from "./github-webhook-events.ts";

const PROTECTED = [
  "error: GH006: Protected branch update failed for {ref}.",
  "error: Changes must be made through a pull request.",
].join("\n");

export class GitHubDouble extends ForgeDoubleBase {
  readonly kind = "github" as const;
  readonly #openapi = GitHubOpenApi.load();
  readonly #state: GitHubDoubleState;
  readonly #hooks: GitHubWebhookEvents;
  readonly #apps: GitHubDoubleApps;
  readonly #api: GitHubApi;

  private constructor(root: string) {
    super(
      root,
      /^\/api\//,
      (status, fault) => ({
        message:
          status === 404
            ? "Not Found"
            : status === 401
              ? "Bad credentials"
              : status === 429 || status === 403
                ? rateLimitMessage(fault?.rateLimitResetSeconds !== undefined)
                : "Server Error",
        documentation_url: "https://docs.github.com/rest",
      }),
      (event, body, secret, id) => ({
        "x-github-event": event,
        "x-github-delivery": id,
        "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
      }),
    );
    this.#state = new GitHubDoubleState(this.git);
    const bodies = new GitHubBodies(this.#openapi, this.#state, () => this.url);
    const context = { state: this.#state, bodies, openapi: this.#openapi };
    this.#apps = new GitHubDoubleApps(this.#state, this.#openapi);
    this.#hooks = new GitHubWebhookEvents(
      this.#state,
      bodies,
      (event, payload) => this.deliver(event, payload),
      this.server.violations,
    );
    this.#api = new GitHubApi({
      state: this.#state,
      openapi: this.#openapi,
      routes: [...pullRoutes(context), ...issueRoutes(context), ...checkRoutes(context)],
      apps: this.#apps,
      hooks: this.#hooks,
      violations: this.server.violations,
    });
  }

  static async start(): Promise<GitHubDouble> {
    const double = new GitHubDouble(await mkdtemp(path.join(tmpdir(), "github-double-")));
    await double.server.start();
    return double;
  }

  addUser(user: GitHubDoubleUser): void {
    this.#state.users.push(user);
  }

  /**
   * A GitHub App installed on this double's repositories (github-app-auth.ts): answers its
   * private key; its installation tokens act as `<slug>[bot]` with role `write`.
   */
  addApp(app: GitHubDoubleApp): string {
    return this.#apps.add(app);
  }

  /** The installation tokens minted so far. */
  get appTokens(): readonly { installationId: number; token: string }[] {
    return this.#apps.minted;
  }

  async createRepository(
    repository: string,
    files: Record<string, string> = { "README.md": "# demo\n" },
  ): Promise<string> {
    this.#state.repos.set(repository, {
      pulls: [],
      issues: [],
      checkRuns: [],
      statuses: [],
      reviews: [],
      threads: [],
      comments: [],
      requiredChecks: [],
    });
    return this.git.create(repository, "main", files, PROTECTED);
  }

  /** Protects `branches`: pushes are refused; merges need `requiredChecks` green. */
  async protectBranch(
    repository: string,
    branches: readonly string[],
    requiredChecks: readonly string[] = [],
  ): Promise<void> {
    this.#state.repo(repository).requiredChecks = [...requiredChecks];
    await this.git.protect(repository, branches);
  }

  pulls(repository: string): readonly DoublePull[] {
    return this.#state.repo(repository).pulls;
  }

  /** A person opens an issue (with GitHub's `issues.opened` webhook); its number. */
  openIssue(
    repository: string,
    issue: {
      title: string;
      body?: string;
      labels?: string[];
      assignees?: string[];
      login?: string;
      blockedBy?: number[];
    },
  ): number {
    const state = this.#state.repo(repository);
    const opened = newDoubleIssue(this.#state.nextNumber(state), issue);
    state.issues.push(opened);
    this.track(this.#hooks.issue(repository, opened, "opened", opened.author));
    return opened.number;
  }

  issues(repository: string): readonly DoubleIssue[] {
    return this.#state.repo(repository).issues;
  }

  /**
   * A person closes (or reopens) an issue by hand, unassigns it, or adds or removes a label
   * (`issues.labeled` / `unlabeled`; a label it already has, or lacks, sends nothing).
   */
  async changeIssue(
    repository: string,
    number: number,
    change: {
      state?: "open" | "closed";
      assignees?: string[];
      addLabel?: string;
      removeLabel?: string;
      login?: string;
    },
  ): Promise<void> {
    const issue = this.#issue(repository, number);
    const login = change.login ?? "octocat";
    issue.updatedAt = new Date().toISOString();
    const { addLabel: add, removeLabel: remove } = change;
    if (add !== undefined && !issue.labels.includes(add)) {
      issue.labels.push(add);
      await this.#hooks.issue(repository, issue, "labeled", login, add);
    }
    if (remove !== undefined && issue.labels.includes(remove)) {
      issue.labels = issue.labels.filter((l) => l !== remove);
      await this.#hooks.issue(repository, issue, "unlabeled", login, remove);
    }
    if (change.assignees) {
      const dropped = issue.assignees.some((a) => !change.assignees?.includes(a));
      issue.assignees = [...change.assignees];
      await this.#hooks.issue(repository, issue, dropped ? "unassigned" : "assigned", login);
    }
    if (change.state && change.state !== issue.state) {
      issue.state = change.state;
      issue.closedAt = change.state === "closed" ? issue.updatedAt : null;
      issue.stateReason = change.state === "closed" ? "completed" : "reopened";
      await this.#hooks.issue(repository, issue, change.state === "closed" ? "closed" : "reopened", login);
    }
  }

  /** A person comments on an issue (with GitHub's `issue_comment.created` webhook); the comment's id. */
  commentOnIssue(repository: string, number: number, login: string, body: string): number {
    const issue = this.#issue(repository, number);
    const id = this.#state.nextId();
    const now = new Date().toISOString();
    const comment = { id, issue: number, login, body, createdAt: now };
    this.#state.repo(repository).comments.push(comment);
    issue.updatedAt = now;
    this.track(this.#hooks.commentOnIssue(repository, issue, comment));
    return id;
  }

  /** The conversation comments of an issue or pull request. */
  comments(repository: string, number: number): readonly { id: number; login: string; body: string }[] {
    return this.#state.repo(repository).comments.filter((c) => c.issue === number);
  }

  #issue(repository: string, number: number): DoubleIssue {
    const issue = this.#state.repo(repository).issues.find((i) => i.number === number);
    if (!issue) throw new Error(`No issue #${number} in ${repository}.`);
    return issue;
  }

  /** A check run on `sha` (a new run of the same name supersedes the old one); its id is its Actions job id. */
  setCheckRun(
    repository: string,
    sha: string,
    run: { name: string; conclusion: CheckRun["conclusion"]; log?: string },
  ): number {
    const id = this.#state.nextId();
    const checkRun: CheckRun = {
      id,
      name: run.name,
      sha,
      status: run.conclusion === null ? "in_progress" : "completed",
      conclusion: run.conclusion,
      log: run.log ?? "",
    };
    this.#state.repo(repository).checkRuns.push(checkRun);
    this.track(this.#hooks.checkRun(repository, checkRun));
    return id;
  }

  setStatus(
    repository: string,
    sha: string,
    status: { context: string; state: "error" | "failure" | "pending" | "success" },
  ): void {
    const recorded = {
      ...status,
      sha,
      targetUrl: `${this.url}/ci/${sha}`,
      id: this.#state.nextId(),
      createdAt: new Date().toISOString(),
    };
    this.#state.repo(repository).statuses.push(recorded);
    this.track(this.#hooks.status(repository, recorded));
  }

  /** A review by a person, with inline comments each opening a thread. */
  async review(
    repository: string,
    number: number,
    review: {
      login: string;
      state: Review["state"];
      body?: string;
      comments?: { path: string; line: number; body: string }[];
    },
  ): Promise<void> {
    const state = this.#state.repo(repository);
    const pull = this.#state.pull(state, number);
    const commitId = await this.#state.headSha(repository, pull);
    const now = new Date().toISOString();
    const submitted: Review = {
      id: this.#state.nextId(),
      pull: number,
      login: review.login,
      state: review.state,
      body: review.body ?? "",
      commitId,
      submittedAt: now,
    };
    state.reviews.push(submitted);
    pull.updatedAt = now;
    const opened: Thread[] = [];
    for (const comment of review.comments ?? []) {
      const thread: Thread = {
        id: `PRRT_${this.#state.nextId()}`,
        pull: number,
        path: comment.path,
        line: comment.line,
        resolved: false,
        comments: [{ id: this.#state.nextId(), login: review.login, body: comment.body, createdAt: now }],
      };
      state.threads.push(thread);
      opened.push(thread);
    }
    // GitHub sends the review's inline comments first, then the review itself.
    for (const thread of opened) {
      const first = thread.comments[0];
      if (first) this.track(this.#hooks.reviewComment(repository, pull, thread, first));
    }
    await this.#hooks.review(repository, pull, submitted);
  }

  /** A comment on the pull request's conversation (not on the diff). */
  comment(repository: string, number: number, login: string, body: string): number {
    const state = this.#state.repo(repository);
    const pull = this.#state.pull(state, number);
    const id = this.#state.nextId();
    const now = new Date().toISOString();
    const comment = { id, issue: number, login, body, createdAt: now };
    state.comments.push(comment);
    pull.updatedAt = now;
    this.track(this.#hooks.issueComment(repository, pull, comment));
    return id;
  }

  reply(repository: string, threadId: string, login: string, body: string, resolve = false): void {
    const thread = this.#state.repo(repository).threads.find((t) => t.id === threadId);
    if (!thread) throw new Error(`No thread ${threadId}.`);
    const now = new Date().toISOString();
    const comment = { id: this.#state.nextId(), login, body, createdAt: now };
    thread.comments.push(comment);
    if (resolve) thread.resolved = true;
    const pull = this.#state.repo(repository).pulls.find((p) => p.number === thread.pull);
    if (pull) {
      pull.updatedAt = now;
      this.track(this.#hooks.reviewComment(repository, pull, thread, comment));
    }
  }

  threads(repository: string, number: number): readonly Thread[] {
    return this.#state.repo(repository).threads.filter((t) => t.pull === number);
  }

  /** A person presses the merge button. */
  async mergeByHuman(
    repository: string,
    number: number,
    login: string,
    method: "merge" | "squash" | "rebase" = "merge",
  ): Promise<string> {
    const answer = await mergePull(
      this.#state,
      repository,
      this.#state.pull(this.#state.repo(repository), number),
      method,
      login,
      undefined,
    );
    if (answer.status !== 200) throw new Error(`merge refused: ${JSON.stringify(answer.body)}`);
    await this.#hooks.pullRequest(
      repository,
      this.#state.pull(this.#state.repo(repository), number),
      "closed",
      login,
    );
    return (answer.body as { sha: string }).sha;
  }

  async closeByHuman(repository: string, number: number, login = "octocat"): Promise<void> {
    const pull = this.#state.pull(this.#state.repo(repository), number);
    pull.headShaAtClose = await this.git.resolve(repository, `refs/heads/${pull.head}`);
    pull.state = "closed";
    pull.updatedAt = new Date().toISOString();
    await this.#hooks.pullRequest(repository, pull, "closed", login);
  }

  protected override handleApi(request: Parameters<ApiHandler>[0]): Promise<ApiAnswer | null> {
    return this.#api.answer(request);
  }

  /** Applies GitHub auto-merge where it is enabled and the head became green (call after setting checks). */
  async settleAutoMerge(repository: string): Promise<void> {
    for (const pull of this.#state.repo(repository).pulls) {
      if (pull.state !== "open" || !pull.autoMerge) continue;
      const method = pull.autoMerge.method as "merge" | "squash" | "rebase";
      const merged = await mergePull(this.#state, repository, pull, method, pull.autoMerge.by, undefined);
      if (merged.status === 200) await this.#hooks.pullRequest(repository, pull, "closed", pull.autoMerge.by);
    }
  }
}

/**
 * GitHub's words for a rate limit (REST docs, "Rate limits for the REST API"): the primary limit
 * (`x-ratelimit-remaining: 0`, wait for `x-ratelimit-reset`), or a secondary limit (`Retry-After`).
 */
function rateLimitMessage(primary: boolean): string {
  return primary
    ? "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000."
    : "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.";
}
