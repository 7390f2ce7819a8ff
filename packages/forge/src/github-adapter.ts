/**
 * The GitHub adapter (github.com and GitHub Enterprise Server): Octokit with its throttling
 * plugin (waits what GitHub asks on a primary or secondary rate limit, up to
 * `maxRateLimitWaitSeconds`; paces writes `writeIntervalMs` apart) and its retry plugin (5xx
 * and lost connections), a fine-grained token or a GitHub App installation token
 * (`@octokit/auth-app` mints and renews it). Review threads and auto-merge are GraphQL-only on
 * GitHub; everything else is REST.
 */
import { createAppAuth } from "@octokit/auth-app";
import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";
import { ensurePull, findPull, type PullPort } from "./ensure-pull.ts";
import type {
  CheckState,
  ConditionalRead,
  EnsuredPullRequest,
  ForgeAdapter,
  ForgeRight,
  MergeOutcome,
  MergeRequest,
  PullRequestDraft,
  PullRequestState,
  ReviewComment,
  ReviewState,
  ReviewThread,
  TokenRights,
} from "./forge-adapter.ts";
import { asOperation, countingFetch, ForgeCallCounter } from "./forge-call-counter.ts";
import { codeOfStatus, ForgeError } from "./forge-errors.ts";
import { type ForgeRateGate, gatedFetch } from "./forge-rate-gate.ts";
import { parseForgeResponse } from "./forge-response.ts";
import { installationTokenCache } from "./github-app-token-cache.ts";
import {
  AUTO_MERGE_MUTATION,
  isGraphqlError,
  messageOf,
  REVIEW_THREADS_QUERY,
  statusOf,
  toChecks,
  toComments,
  toReviews,
  toState,
} from "./github-mapping.ts";
import {
  GitHubAppSchema,
  GitHubAutoMergeSchema,
  GitHubMergeSchema,
  type GitHubPull,
  GitHubPullSchema,
  GitHubRepoSchema,
  GitHubReviewThreadsSchema,
  GitHubUserSchema,
} from "./github-schemas.ts";
import { githubWriteGroups } from "./github-write-pacing.ts";
import { tail } from "./log-tail.ts";
import { rightsAdvice } from "./token-rights.ts";

export type GitHubAuth =
  | { readonly kind: "token"; readonly token: string }
  | {
      readonly kind: "app";
      readonly appId: number;
      readonly privateKey: string;
      readonly installationId: number;
    };

export interface GitHubAdapterOptions {
  /** REST base: `https://api.github.com`, or `https://HOST/api/v3` for Enterprise Server. */
  readonly apiUrl: string;
  readonly owner: string;
  readonly repo: string;
  readonly auth: GitHubAuth;
  readonly counter?: ForgeCallCounter;
  /** Retries of a 5xx or lost request (retry plugin). Default 3. */
  readonly retries?: number;
  /** The retry plugin's backoff unit: retry n waits n² × this. Default 1000 ms. */
  readonly retryBaseMs?: number;
  /** Rate-limit retries, each waiting what GitHub asks (throttling plugin). Default 3. */
  readonly rateLimitRetries?: number;
  /** A rate-limit wait longer than this fails with `rate_limited` instead. Default 120. */
  readonly maxRateLimitWaitSeconds?: number;
  /**
   * The token's rate-limit gate, shared by its adapters in the process (forge-rate-gate.ts), and
   * the id of its Octokit throttling groups (writes one at a time, per token). Default: the
   * adapter's own gate, and one throttling id for every token of the process.
   */
  readonly gate?: { readonly gate: ForgeRateGate; readonly id: string };
  /**
   * Least ms between two writes of one throttling id (and GraphQL requests; writes that notify
   * people: 3 ×), github-write-pacing.ts. Default 1000, GitHub's guidance; 0: no pacing.
   */
  readonly writeIntervalMs?: number;
}

const ThrottledOctokit = Octokit.plugin(throttling, retry);

export class GitHubAdapter implements ForgeAdapter {
  readonly kind = "github" as const;
  readonly calls: ForgeCallCounter;
  readonly #octokit: InstanceType<typeof ThrottledOctokit>;
  readonly #owner: string;
  readonly #repo: string;
  readonly #auth: GitHubAuth;

  constructor(options: GitHubAdapterOptions) {
    this.calls = options.counter ?? new ForgeCallCounter();
    this.#owner = options.owner;
    this.#repo = options.repo;
    this.#auth = options.auth;
    const rateLimitRetries = options.rateLimitRetries ?? 3;
    const maxWait = options.maxRateLimitWaitSeconds ?? 120;
    const onLimit = (retryAfter: number, _options: unknown, _octokit: unknown, retryCount: number) =>
      retryCount < rateLimitRetries && retryAfter <= maxWait;
    this.#octokit = new ThrottledOctokit({
      baseUrl: options.apiUrl.replace(/\/+$/, ""),
      ...(options.auth.kind === "token"
        ? { auth: options.auth.token }
        : {
            authStrategy: createAppAuth,
            auth: {
              appId: options.auth.appId,
              privateKey: options.auth.privateKey,
              installationId: options.auth.installationId,
              cache: installationTokenCache(options.apiUrl, options.auth.appId),
            },
          }),
      request: {
        fetch: options.gate
          ? gatedFetch(options.gate.gate, maxWait * 1000, countingFetch(this.calls))
          : countingFetch(this.calls),
      },
      retry: {
        retries: options.retries ?? 3,
        doNotRetry: [400, 401, 403, 404, 405, 409, 410, 422, 451],
        retryAfterBaseValue: options.retryBaseMs ?? 1000,
      },
      throttle: {
        onRateLimit: onLimit,
        onSecondaryRateLimit: onLimit,
        ...githubWriteGroups(options.writeIntervalMs),
        ...(options.gate ? { id: options.gate.id } : {}),
      },
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
  }

  ensurePullRequest(draft: PullRequestDraft): Promise<EnsuredPullRequest> {
    return this.#op("ensurePullRequest", () => ensurePull(this.#port, draft));
  }

  findPullRequest(head: string, marker: string): Promise<PullRequestState | null> {
    return this.#op("findPullRequest", () => findPull(this.#port, head, marker));
  }

  getPullRequest(number: number): Promise<PullRequestState> {
    return this.#op("getPullRequest", async () => toState(await this.#pull(number)));
  }

  listChecks(sha: string): Promise<readonly CheckState[]> {
    return this.#op("listChecks", async () => {
      const [runs, statuses] = await Promise.all([this.#checkRuns(sha, null), this.#statuses(sha, null)]);
      return toChecks(runs?.data, statuses?.data);
    });
  }

  listReviews(number: number): Promise<readonly ReviewState[]> {
    return this.#op("listReviews", async () =>
      toReviews(
        await this.#octokit.paginate(this.#octokit.rest.pulls.listReviews, {
          owner: this.#owner,
          repo: this.#repo,
          pull_number: number,
          per_page: 100,
        }),
      ),
    );
  }

  readPullRequest(number: number, etag: string | null): Promise<ConditionalRead<PullRequestState>> {
    return this.#op("readPullRequest", async () => {
      const read = await conditionally(etag, (headers) =>
        this.#octokit.rest.pulls.get({ owner: this.#owner, repo: this.#repo, pull_number: number, headers }),
      );
      if (!read) return { changed: false };
      const pull = parseForgeResponse("github", GitHubPullSchema, read.data, `GET pulls/${number}`);
      return { changed: true, value: toState(pull), etag: read.etag };
    });
  }

  /**
   * Check runs and commit statuses are two resources, so the validator holds both ETags. When
   * either changed, the other is read again in full (the adapter keeps no bodies between calls).
   */
  readChecks(sha: string, etag: string | null): Promise<ConditionalRead<readonly CheckState[]>> {
    return this.#op("readChecks", async () => {
      const [runsTag = null, statusTag = null] = splitTags(etag);
      const [runs, statuses] = await Promise.all([
        this.#checkRuns(sha, runsTag),
        this.#statuses(sha, statusTag),
      ]);
      if (!runs && !statuses) return { changed: false };
      const fullRuns = runs ?? (await this.#checkRuns(sha, null));
      const fullStatuses = statuses ?? (await this.#statuses(sha, null));
      return {
        changed: true,
        value: toChecks(fullRuns?.data, fullStatuses?.data),
        etag: joinTags(fullRuns?.etag ?? null, fullStatuses?.etag ?? null),
      };
    });
  }

  /** The first 100 reviews (a conditional read is one page). */
  readReviews(number: number, etag: string | null): Promise<ConditionalRead<readonly ReviewState[]>> {
    return this.#op("readReviews", async () => {
      const read = await conditionally(etag, (headers) =>
        this.#octokit.rest.pulls.listReviews({
          owner: this.#owner,
          repo: this.#repo,
          pull_number: number,
          per_page: 100,
          headers,
        }),
      );
      return read ? { changed: true, value: toReviews(read.data), etag: read.etag } : { changed: false };
    });
  }

  /** The first 100 conversation comments (a conditional read is one page). */
  readComments(number: number, etag: string | null): Promise<ConditionalRead<readonly ReviewComment[]>> {
    return this.#op("readComments", async () => {
      const read = await conditionally(etag, (headers) =>
        this.#octokit.rest.issues.listComments({
          owner: this.#owner,
          repo: this.#repo,
          issue_number: number,
          per_page: 100,
          headers,
        }),
      );
      return read ? { changed: true, value: toComments(read.data), etag: read.etag } : { changed: false };
    });
  }

  /** A reply to the thread's first comment (GitHub's replies are to a top-level review comment). */
  replyToThread(number: number, thread: ReviewThread, body: string): Promise<void> {
    return this.#op("replyToThread", async () => {
      const first = thread.comments[0];
      if (!first)
        throw new ForgeError("github", "not_found", `Thread ${thread.id} has no comment to reply to.`);
      await this.#octokit.rest.pulls.createReplyForReviewComment({
        owner: this.#owner,
        repo: this.#repo,
        pull_number: number,
        comment_id: first.id,
        body,
      });
    });
  }

  addComment(number: number, body: string): Promise<void> {
    return this.#op("addComment", async () => {
      await this.#octokit.rest.issues.createComment({
        owner: this.#owner,
        repo: this.#repo,
        issue_number: number,
        body,
      });
    });
  }

  setBase(number: number, base: string): Promise<PullRequestState> {
    return this.#op("setBase", async () => {
      const { data } = await this.#octokit.rest.pulls.update({
        owner: this.#owner,
        repo: this.#repo,
        pull_number: number,
        base,
      });
      return toState(parseForgeResponse("github", GitHubPullSchema, data, `PATCH pulls/${number}`));
    });
  }

  listReviewThreads(number: number): Promise<readonly ReviewThread[]> {
    return this.#op("listReviewThreads", async () => {
      const data = parseForgeResponse(
        "github",
        GitHubReviewThreadsSchema,
        await this.#octokit.graphql(REVIEW_THREADS_QUERY, { owner: this.#owner, repo: this.#repo, number }),
        "GraphQL reviewThreads",
      );
      return data.repository.pullRequest.reviewThreads.nodes.map((thread) => ({
        id: thread.id,
        path: thread.path,
        line: thread.line,
        resolved: thread.isResolved,
        comments: thread.comments.nodes.map((comment) => ({
          id: comment.databaseId ?? 0,
          author: comment.author?.login ?? "ghost",
          body: comment.body,
          createdAt: comment.createdAt,
        })),
      }));
    });
  }

  merge(number: number, request: MergeRequest): Promise<MergeOutcome> {
    return this.#op("merge", async () => {
      try {
        const { data } = await this.#octokit.rest.pulls.merge({
          owner: this.#owner,
          repo: this.#repo,
          pull_number: number,
          merge_method: request.method,
          sha: request.sha,
          ...(request.commitTitle ? { commit_title: request.commitTitle } : {}),
        });
        return {
          kind: "merged",
          sha: parseForgeResponse("github", GitHubMergeSchema, data, "PUT merge").sha,
        };
      } catch (error) {
        const status = statusOf(error);
        if (status === 405 || status === 409) return { kind: "refused", reason: messageOf(error) };
        throw error;
      }
    });
  }

  enableAutoMerge(number: number, request: MergeRequest): Promise<MergeOutcome> {
    return this.#op("enableAutoMerge", async () => {
      const pull = await this.#pull(number);
      try {
        parseForgeResponse(
          "github",
          GitHubAutoMergeSchema,
          await this.#octokit.graphql(AUTO_MERGE_MUTATION, {
            id: pull.node_id,
            mergeMethod: request.method.toUpperCase(),
            sha: request.sha,
          }),
          "GraphQL enablePullRequestAutoMerge",
        );
        return { kind: "queued" };
      } catch (error) {
        if (error instanceof ForgeError) throw error;
        if (isGraphqlError(error)) return { kind: "refused", reason: messageOf(error) };
        throw error;
      }
    });
  }

  failingLogTail(check: CheckState, maxBytes: number): Promise<string | null> {
    return this.#op("failingLogTail", async () => {
      if (check.jobId === null) return null;
      try {
        const { data } = await this.#octokit.rest.actions.downloadJobLogsForWorkflowRun({
          owner: this.#owner,
          repo: this.#repo,
          job_id: check.jobId,
        });
        const text = typeof data === "string" ? data : String(data);
        return tail(text, maxBytes);
      } catch (error) {
        if (statusOf(error) === 404 || statusOf(error) === 410) return null;
        throw error;
      }
    });
  }

  checkTokenRights(): Promise<TokenRights> {
    return this.#op("checkTokenRights", async () => {
      const login = await this.#login();
      let repo: ReturnType<typeof GitHubRepoSchema.parse>;
      try {
        const { data } = await this.#octokit.rest.repos.get({ owner: this.#owner, repo: this.#repo });
        repo = parseForgeResponse("github", GitHubRepoSchema, data, "GET repo");
      } catch (error) {
        if (statusOf(error) !== 404 && statusOf(error) !== 403) throw error;
        const missing: ForgeRight[] = ["read", "push", "pull_requests", "checks_read", "merge"];
        return { login, granted: [], missing, advice: rightsAdvice("github", missing) };
      }
      const granted = new Set<ForgeRight>(["read"]);
      // A user token's repository role; an installation token has none here (its permissions are the App's).
      const writes = repo.permissions ? repo.permissions.push : this.#auth.kind === "app";
      if (writes) for (const right of ["push", "pull_requests", "merge"] as const) granted.add(right);
      try {
        await this.#octokit.rest.checks.listForRef({
          owner: this.#owner,
          repo: this.#repo,
          ref: repo.default_branch,
          per_page: 1,
        });
        granted.add("checks_read");
      } catch (error) {
        if (statusOf(error) !== 403 && statusOf(error) !== 404) throw error;
      }
      const missing = (["read", "push", "pull_requests", "checks_read", "merge"] as const).filter(
        (right) => !granted.has(right),
      );
      return { login, granted: [...granted], missing, advice: rightsAdvice("github", missing) };
    });
  }

  closePullRequest(number: number): Promise<void> {
    return this.#op("closePullRequest", async () => {
      await this.#octokit.rest.pulls.update({
        owner: this.#owner,
        repo: this.#repo,
        pull_number: number,
        state: "closed",
      });
    });
  }

  #checkRuns(sha: string, etag: string | null) {
    return conditionally(etag, (headers) =>
      this.#octokit.rest.checks.listForRef({
        owner: this.#owner,
        repo: this.#repo,
        ref: sha,
        filter: "latest",
        per_page: 100,
        headers,
      }),
    );
  }

  #statuses(sha: string, etag: string | null) {
    return conditionally(etag, (headers) =>
      this.#octokit.rest.repos.getCombinedStatusForRef({
        owner: this.#owner,
        repo: this.#repo,
        ref: sha,
        headers,
      }),
    );
  }

  /**
   * The account the token acts as: the user of a token, or an App's bot (`<slug>[bot]`, from
   * `GET /app`, which the App's JWT authenticates), so its own reviews, replies and comments are
   * never taken for a person's.
   */
  async #login(): Promise<string> {
    if (this.#auth.kind === "app") {
      const { data } = await this.#octokit.rest.apps.getAuthenticated();
      return `${parseForgeResponse("github", GitHubAppSchema, data, "GET app").slug}[bot]`;
    }
    const { data } = await this.#octokit.rest.users.getAuthenticated();
    return parseForgeResponse("github", GitHubUserSchema, data, "GET user").login;
  }

  async #pull(number: number): Promise<GitHubPull> {
    const { data } = await this.#octokit.rest.pulls.get({
      owner: this.#owner,
      repo: this.#repo,
      pull_number: number,
    });
    return parseForgeResponse("github", GitHubPullSchema, data, `GET pulls/${number}`);
  }

  async #pullsOf(head: string, state: "open" | "all"): Promise<GitHubPull[]> {
    const { data } = await this.#octokit.rest.pulls.list({
      owner: this.#owner,
      repo: this.#repo,
      head: `${this.#owner}:${head}`,
      state,
      sort: "created",
      direction: "desc",
      per_page: 100,
    });
    return data.map((pull) => parseForgeResponse("github", GitHubPullSchema, pull, "GET pulls"));
  }

  /** What `ensurePull` needs of GitHub: pulls by head, create (labels added after), edit. */
  readonly #port: PullPort<GitHubPull> = {
    forge: "github",
    conflictStatus: 422,
    listOpen: (head) => this.#pullsOf(head, "open"),
    findFrom: async (head, accept) => (await this.#pullsOf(head, "all")).find(accept) ?? null,
    view: (pull) => ({
      name: `Pull request #${pull.number}`,
      title: pull.title,
      body: pull.body,
      base: pull.base.ref,
      labels: pull.labels.map((l) => l.name),
    }),
    create: async (draft, body) => {
      const { data } = await this.#octokit.rest.pulls.create({
        owner: this.#owner,
        repo: this.#repo,
        head: draft.head,
        base: draft.base,
        title: draft.title,
        body,
      });
      const pull = parseForgeResponse("github", GitHubPullSchema, data, "POST pulls");
      await this.#addLabels(pull, draft.labels ?? []);
      return pull;
    },
    edit: async (pull, change) => {
      let current = pull;
      if (change.fieldsChanged) {
        const { data } = await this.#octokit.rest.pulls.update({
          owner: this.#owner,
          repo: this.#repo,
          pull_number: pull.number,
          title: change.title,
          body: change.body,
          base: change.base,
        });
        current = parseForgeResponse("github", GitHubPullSchema, data, `PATCH pulls/${pull.number}`);
      }
      await this.#addLabels(current, change.addLabels);
      return current;
    },
    statusOf,
    toState,
  };

  /** Adds the labels the pull request lacks; whether any was added. */
  async #addLabels(pull: GitHubPull, labels: readonly string[]): Promise<boolean> {
    const missing = labels.filter((label) => !pull.labels.some((l) => l.name === label));
    if (missing.length === 0) return false;
    await this.#octokit.rest.issues.addLabels({
      owner: this.#owner,
      repo: this.#repo,
      issue_number: pull.number,
      labels: missing,
    });
    return true;
  }

  /** Runs one operation: counts its requests under `name` and turns Octokit's errors into ForgeErrors. */
  #op<T>(name: string, work: () => Promise<T>): Promise<T> {
    return asOperation(name, async () => {
      try {
        return await work();
      } catch (error) {
        if (error instanceof ForgeError) throw error;
        const status = statusOf(error);
        if (status === null) {
          throw new ForgeError("github", "unavailable", `GitHub ${name} failed: ${messageOf(error)}`);
        }
        const code =
          status === 403 && /rate limit/i.test(messageOf(error)) ? "rate_limited" : codeOfStatus(status);
        throw new ForgeError(
          "github",
          code,
          `GitHub ${name} answered ${status}: ${messageOf(error)}`,
          status,
        );
      }
    });
  }
}

/**
 * One GET with `If-None-Match: etag` (when there is one): `null` when GitHub answered 304 Not
 * Modified (Octokit raises it as an error with status 304), else the body and its new ETag.
 */
async function conditionally<T>(
  etag: string | null,
  request: (headers: Record<string, string>) => Promise<{ data: T; headers: { etag?: string | undefined } }>,
): Promise<{ data: T; etag: string | null } | null> {
  try {
    const response = await request(etag ? { "if-none-match": etag } : {});
    return { data: response.data, etag: response.headers.etag ?? null };
  } catch (error) {
    if (etag && statusOf(error) === 304) return null;
    throw error;
  }
}

/** Two ETags in one opaque validator (an ETag is a quoted string, so a newline cannot occur in one). */
function joinTags(...tags: (string | null)[]): string | null {
  return tags.every((tag) => tag === null) ? null : tags.map((tag) => tag ?? "").join("\n");
}

function splitTags(etag: string | null): (string | null)[] {
  return etag === null ? [] : etag.split("\n").map((tag) => tag || null);
}
