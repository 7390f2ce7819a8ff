/**
 * The Gitea / Forgejo adapter: gitea-js (generated from Gitea's swagger) over Overseer's
 * retrying, counting fetch, with an access token. Checks are commit statuses (Gitea Actions
 * report as statuses too); review threads are a review's inline comments on one line, resolved
 * when Gitea names a resolver; Overseer replies on a thread with an inline comment on the same
 * line, which Gitea shows in that conversation. A failing check's log is its Gitea Actions
 * job's (Gitea ≥ 1.24), else the status's description and link (gitea-actions.ts). Labels are
 * named in the project and given to Gitea by id; a missing one is created.
 */
import { giteaApi } from "gitea-js";
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
  ReviewVerdict,
  TokenRights,
} from "./forge-adapter.ts";
import { asOperation, ForgeCallCounter } from "./forge-call-counter.ts";
import { codeOfStatus, ForgeError } from "./forge-errors.ts";
import { parseForgeResponse } from "./forge-response.ts";
import { GiteaActions } from "./gitea-actions.ts";
import {
  GiteaCommentsSchema,
  GiteaLabelSchema,
  GiteaLabelsSchema,
  type GiteaPull,
  GiteaPullSchema,
  GiteaRepoSchema,
  GiteaReviewCommentsSchema,
  GiteaReviewsSchema,
  GiteaStatusesSchema,
  GiteaUserSchema,
} from "./gitea-schemas.ts";
import { RETRY_POLICY_DEFAULTS, type RetryPolicy, retryingFetch } from "./retrying-fetch.ts";
import { FORGE_RIGHTS, rightsAdvice } from "./token-rights.ts";

export interface GiteaAdapterOptions {
  /** The instance root (`https://gitea.example`, `https://codeberg.org`), without `/api/v1`. */
  readonly url: string;
  readonly owner: string;
  readonly repo: string;
  readonly token: string;
  readonly counter?: ForgeCallCounter;
  readonly retry?: Partial<RetryPolicy>;
  /** Pages of 50 pull requests `findPullRequest` looks through (newest first). Default 10. */
  readonly maxFindPages?: number;
}

const PAGE = 50;
/** The colour of a label Overseer creates (Gitea requires one). */
const LABEL_COLOR = "#5319e7";

export class GiteaAdapter implements ForgeAdapter {
  readonly kind = "gitea" as const;
  readonly calls: ForgeCallCounter;
  readonly #api: ReturnType<typeof giteaApi>;
  readonly #owner: string;
  readonly #repo: string;
  readonly #maxFindPages: number;
  readonly #actions: GiteaActions;

  constructor(options: GiteaAdapterOptions) {
    this.calls = options.counter ?? new ForgeCallCounter();
    this.#owner = options.owner;
    this.#repo = options.repo;
    this.#maxFindPages = options.maxFindPages ?? 10;
    const send = retryingFetch(this.calls, { ...RETRY_POLICY_DEFAULTS, ...options.retry });
    const base = options.url.replace(/\/+$/, "");
    this.#api = giteaApi(base, { token: options.token, customFetch: send });
    // The Actions API Gitea 1.24 added is newer than gitea-js: plain requests through the same fetch.
    const repoPath = `${base}/api/v1/repos/${encodeURIComponent(options.owner)}/${encodeURIComponent(options.repo)}`;
    this.#actions = new GiteaActions((path, query) =>
      send(`${repoPath}${path}${query ? `?${new URLSearchParams(query)}` : ""}`, {
        headers: { authorization: `token ${options.token}`, accept: "application/json" },
      }),
    );
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
      const { data } = await this.#api.repos.repoListStatusesByRef(this.#owner, this.#repo, sha, {
        limit: 100,
      });
      const statuses = parseForgeResponse("gitea", GiteaStatusesSchema, data, "GET statuses");
      const latest = new Map<string, (typeof statuses)[number]>();
      for (const status of statuses) {
        const seen = latest.get(status.context);
        if (!seen || seen.id < status.id) latest.set(status.context, status);
      }
      return [...latest.values()].map((status) => {
        const failed = status.status === "error" || status.status === "failure";
        const check: CheckState = {
          name: status.context,
          conclusion:
            status.status === "error" || status.status === "failure"
              ? "failure"
              : status.status === "warning"
                ? "neutral"
                : status.status,
          url: status.target_url || null,
          source: "status",
          // Looked up when its log is asked for (gitea-actions.ts).
          jobId: null,
        };
        if (!failed) return check;
        return this.#actions.note(check, {
          sha,
          context: status.context,
          targetUrl: status.target_url || null,
          description: status.description ?? "",
        });
      });
    });
  }

  listReviews(number: number): Promise<readonly ReviewState[]> {
    return this.#op("listReviews", async () =>
      (await this.#reviews(number)).map((review) => ({
        id: review.id,
        author: review.user?.login ?? "ghost",
        verdict: reviewVerdict(review.state),
        body: review.body ?? "",
        commitSha: review.commit_id ?? null,
        submittedAt: review.submitted_at ?? null,
      })),
    );
  }

  listReviewThreads(number: number): Promise<readonly ReviewThread[]> {
    return this.#op("listReviewThreads", async () => {
      const threads = new Map<string, ReviewThread & { comments: ReviewThread["comments"][number][] }>();
      // Only reviews with inline comments have a thread to read (Gitea counts them on the review).
      for (const review of (await this.#reviews(number)).filter((r) => r.comments_count !== 0)) {
        const { data } = await this.#api.repos.repoGetPullReviewComments(
          this.#owner,
          this.#repo,
          number,
          review.id,
        );
        for (const comment of parseForgeResponse(
          "gitea",
          GiteaReviewCommentsSchema,
          data,
          "GET review comments",
        )) {
          const line = comment.position || comment.original_position || null;
          const key = `${comment.path}:${line ?? "outdated"}`;
          const thread = threads.get(key) ?? {
            id: key,
            path: comment.path,
            line: comment.position ? comment.position : null,
            resolved: false,
            comments: [],
          };
          thread.comments.push({
            id: comment.id,
            author: comment.user?.login ?? "ghost",
            body: comment.body,
            createdAt: comment.created_at,
          });
          threads.set(key, { ...thread, resolved: thread.resolved || Boolean(comment.resolver) });
        }
      }
      return [...threads.values()].map((thread) => ({
        ...thread,
        comments: [...thread.comments].sort((a, b) => a.createdAt.localeCompare(b.createdAt)),
      }));
    });
  }

  merge(number: number, request: MergeRequest): Promise<MergeOutcome> {
    return this.#op("merge", () => this.#merge(number, request, false));
  }

  enableAutoMerge(number: number, request: MergeRequest): Promise<MergeOutcome> {
    return this.#op("enableAutoMerge", () => this.#merge(number, request, true));
  }

  failingLogTail(check: CheckState, maxBytes: number): Promise<string | null> {
    return this.#op("failingLogTail", () => this.#actions.logTail(check, maxBytes));
  }

  checkTokenRights(): Promise<TokenRights> {
    return this.#op("checkTokenRights", async () => {
      const login = parseForgeResponse(
        "gitea",
        GiteaUserSchema,
        (await this.#api.user.userGetCurrent()).data,
        "GET user",
      ).login;
      const granted = new Set<ForgeRight>();
      try {
        const repo = parseForgeResponse(
          "gitea",
          GiteaRepoSchema,
          (await this.#api.repos.repoGet(this.#owner, this.#repo)).data,
          "GET repo",
        );
        granted.add("read");
        if (repo.permissions?.push)
          for (const right of ["push", "pull_requests", "merge"] as const) granted.add(right);
        await this.#api.repos.repoListStatusesByRef(this.#owner, this.#repo, repo.default_branch, {
          limit: 1,
        });
        granted.add("checks_read");
      } catch (error) {
        const failure = giteaError("checkTokenRights", error);
        if (failure.code !== "not_found" && failure.code !== "forbidden") throw failure;
      }
      const missing = FORGE_RIGHTS.filter((right) => !granted.has(right));
      return { login, granted: [...granted], missing, advice: rightsAdvice("gitea", missing) };
    });
  }

  // Gitea's API answers no ETag on these resources: every read is a full one (`etag` stays null).
  async readPullRequest(number: number, _etag: string | null): Promise<ConditionalRead<PullRequestState>> {
    return { changed: true, value: await this.getPullRequest(number), etag: null };
  }

  async readChecks(sha: string, _etag: string | null): Promise<ConditionalRead<readonly CheckState[]>> {
    return { changed: true, value: await this.listChecks(sha), etag: null };
  }

  async readReviews(number: number, _etag: string | null): Promise<ConditionalRead<readonly ReviewState[]>> {
    return { changed: true, value: await this.listReviews(number), etag: null };
  }

  readComments(number: number, _etag: string | null): Promise<ConditionalRead<readonly ReviewComment[]>> {
    return this.#op("readComments", async () => {
      const { data } = await this.#api.repos.issueGetComments(this.#owner, this.#repo, number);
      const comments = parseForgeResponse(
        "gitea",
        GiteaCommentsSchema,
        data,
        `GET issues/${number}/comments`,
      );
      const value = comments.map((c) => ({
        id: c.id,
        author: c.user?.login ?? "ghost",
        body: c.body,
        createdAt: c.created_at,
      }));
      return { changed: true, value, etag: null };
    });
  }

  /**
   * Gitea groups inline comments into one conversation by file and line, and its API has no
   * reply endpoint: the reply is a comment-only review with one inline comment on the thread's
   * line. An outdated thread (no line on the head) is answered in the conversation instead.
   */
  replyToThread(number: number, thread: ReviewThread, body: string): Promise<void> {
    if (thread.line === null) {
      const first = thread.comments[0];
      const quote = `> ${thread.path}${first ? ` — ${first.author}: ${first.body.split("\n")[0]}` : ""}`;
      return this.addComment(number, `${quote}\n\n${body}`);
    }
    const line = thread.line;
    return this.#op("replyToThread", async () => {
      await this.#api.repos.repoCreatePullReview(this.#owner, this.#repo, number, {
        event: "COMMENT",
        body: "",
        comments: [{ path: thread.path, new_position: line, body }],
      });
    });
  }

  addComment(number: number, body: string): Promise<void> {
    return this.#op("addComment", async () => {
      await this.#api.repos.issueCreateComment(this.#owner, this.#repo, number, { body });
    });
  }

  setBase(number: number, base: string): Promise<PullRequestState> {
    return this.#op("setBase", async () => {
      const { data } = await this.#api.repos.repoEditPullRequest(this.#owner, this.#repo, number, { base });
      return toState(pull(data, `PATCH pulls/${number}`));
    });
  }

  closePullRequest(number: number): Promise<void> {
    return this.#op("closePullRequest", async () => {
      await this.#api.repos.repoEditPullRequest(this.#owner, this.#repo, number, { state: "closed" });
    });
  }

  async #merge(number: number, request: MergeRequest, auto: boolean): Promise<MergeOutcome> {
    try {
      await this.#api.repos.repoMergePullRequest(this.#owner, this.#repo, number, {
        Do: request.method,
        head_commit_id: request.sha,
        ...(request.commitTitle ? { MergeTitleField: request.commitTitle } : {}),
        ...(auto ? { merge_when_checks_succeed: true } : {}),
      });
    } catch (error) {
      const failure = giteaError("merge", error);
      if (failure.status === 405 || failure.status === 409)
        return { kind: "refused", reason: failure.message };
      // Gitea answers a merge of a closed pull request with 404, like one that does not exist.
      const current = failure.status === 404 ? await this.#pull(number).catch(() => null) : null;
      if (current) {
        const state = current.merged ? "merged" : current.state;
        return { kind: "refused", reason: `Gitea refused the merge: pull request #${number} is ${state}.` };
      }
      throw failure;
    }
    const after = await this.#pull(number);
    if (!after.merged) return { kind: "queued" };
    return { kind: "merged", sha: after.merge_commit_sha ?? after.head.sha };
  }

  async #pull(number: number): Promise<GiteaPull> {
    return pull(
      (await this.#api.repos.repoGetPullRequest(this.#owner, this.#repo, number)).data,
      `GET pulls/${number}`,
    );
  }

  async #list(state: "open" | "all", page: number): Promise<GiteaPull[]> {
    const { data } = await this.#api.repos.repoListPullRequests(this.#owner, this.#repo, {
      state,
      sort: "recentupdate",
      page,
      limit: PAGE,
    });
    return (data ?? []).map((item) => pull(item, "GET pulls"));
  }

  async #reviews(number: number) {
    const { data } = await this.#api.repos.repoListPullReviews(this.#owner, this.#repo, number, {
      limit: 50,
    });
    return parseForgeResponse("gitea", GiteaReviewsSchema, data, "GET reviews");
  }

  /**
   * What `ensurePull` needs of Gitea: its list cannot filter by head, so open pull requests are
   * paged through, and `findFrom` looks through at most `maxFindPages` pages, newest first.
   */
  readonly #port: PullPort<GiteaPull> = {
    forge: "gitea",
    // "pull request already exists for these targets": a retried create.
    conflictStatus: 409,
    listOpen: async (head) => {
      const open: GiteaPull[] = [];
      for (let page = 1; ; page++) {
        const pulls = await this.#list("open", page);
        open.push(...pulls.filter((p) => p.head.ref === head));
        if (pulls.length < PAGE) return open;
      }
    },
    findFrom: async (head, accept) => {
      for (let page = 1; page <= this.#maxFindPages; page++) {
        const pulls = await this.#list("all", page);
        const found = pulls.find((p) => p.head.ref === head && accept(p));
        if (found || pulls.length < PAGE) return found ?? null;
      }
      return null;
    },
    view: (p) => ({
      name: `Pull request #${p.number}`,
      title: p.title,
      body: p.body,
      base: p.base.ref,
      labels: (p.labels ?? []).map((l) => l.name),
    }),
    create: async (draft, body) => {
      const labels = await this.#labelIds(draft.labels ?? []);
      const { data } = await this.#api.repos.repoCreatePullRequest(this.#owner, this.#repo, {
        head: draft.head,
        base: draft.base,
        title: draft.title,
        body,
        ...(labels.length ? { labels } : {}),
      });
      return pull(data, "POST pulls");
    },
    edit: async (current, change) => {
      const have = (current.labels ?? []).map((l) => l.name);
      const labels = change.addLabels.length
        ? await this.#labelIds([...have, ...change.addLabels])
        : undefined;
      const { data } = await this.#api.repos.repoEditPullRequest(this.#owner, this.#repo, current.number, {
        title: change.title,
        body: change.body,
        base: change.base,
        ...(labels ? { labels } : {}),
      });
      return pull(data, `PATCH pulls/${current.number}`);
    },
    statusOf: (error) => giteaError("ensurePullRequest", error).status,
    toState,
  };

  /**
   * The ids of the labels named `names` (Gitea takes ids), each label the repository lacks
   * created first (Gitea names no label twice here: the first of a name is used).
   */
  async #labelIds(names: readonly string[]): Promise<number[]> {
    if (names.length === 0) return [];
    const known = new Map<string, number>();
    for (let page = 1; ; page++) {
      const { data } = await this.#api.repos.issueListLabels(this.#owner, this.#repo, { page, limit: PAGE });
      const labels = parseForgeResponse("gitea", GiteaLabelsSchema, data, "GET labels");
      for (const label of labels) if (!known.has(label.name)) known.set(label.name, label.id);
      if (labels.length < PAGE) break;
    }
    for (const name of names) {
      if (known.has(name)) continue;
      const { data } = await this.#api.repos.issueCreateLabel(this.#owner, this.#repo, {
        name,
        color: LABEL_COLOR,
        description: "Added by Overseer (landing.pull_request.labels)",
      });
      known.set(name, parseForgeResponse("gitea", GiteaLabelSchema, data, "POST labels").id);
    }
    return [...new Set(names)].map((name) => known.get(name) ?? 0);
  }

  #op<T>(name: string, work: () => Promise<T>): Promise<T> {
    return asOperation(name, async () => {
      try {
        return await work();
      } catch (error) {
        throw giteaError(name, error);
      }
    });
  }
}

function pull(data: unknown, request: string): GiteaPull {
  return parseForgeResponse("gitea", GiteaPullSchema, data, request);
}

function toState(p: GiteaPull): PullRequestState {
  return {
    number: p.number,
    url: p.html_url,
    head: p.head.ref,
    headSha: p.head.sha,
    base: p.base.ref,
    title: p.title,
    body: p.body ?? "",
    status: p.merged ? "merged" : p.state,
    mergeCommitSha: p.merged ? (p.merge_commit_sha ?? null) : null,
    mergedBy: p.merged_by?.login ?? null,
    mergeable: p.merged || p.state !== "open" ? null : (p.mergeable ?? null),
  };
}

function reviewVerdict(state: string): ReviewVerdict {
  switch (state) {
    case "APPROVED":
      return "approved";
    case "REQUEST_CHANGES":
      return "changes_requested";
    case "PENDING":
      return "pending";
    default:
      return "commented";
  }
}

/** gitea-js throws the failed Response (its body parsed into `error`); a ForgeError says what it was. */
function giteaError(operation: string, error: unknown): ForgeError {
  if (error instanceof ForgeError) return error;
  if (error instanceof Response) {
    const body: unknown = (error as Response & { error?: unknown }).error;
    const detail =
      typeof body === "object" && body !== null && "message" in body
        ? String(body.message)
        : error.statusText;
    return new ForgeError(
      "gitea",
      codeOfStatus(error.status),
      `Gitea ${operation} answered ${error.status}: ${detail}`,
      error.status,
    );
  }
  return new ForgeError("gitea", "unavailable", `Gitea ${operation} failed: ${String(error)}`);
}
