/**
 * A Gitea / Forgejo for tests (REST under `/api/v1`): its repositories are real git over smart
 * HTTP, with protected branches refused on push by a pre-receive hook in Gitea's words; every
 * REST request is checked against the parameters and body Gitea's swagger declares and every
 * answer against the shape of a swagger model typed by gitea-js, so an adapter that sends or
 * expects what Gitea does not makes `violations` non-empty. People act through its methods:
 * commit statuses, reviews with inline comments, replies and resolution, conversation comments,
 * labels, a merge or a close by hand, Gitea Actions jobs with their logs, and Gitea's scheduled
 * auto-merge settling. Webhooks carry `X-Gitea-Event` (what Gitea's HookEventType.Event() names:
 * `pull_request`, `status`, `issue_comment`, `pull_request_approved` / `_rejected` / `_comment`
 * for reviews), `X-Gitea-Event-Type` (the detailed type), `X-Gitea-Delivery` and
 * `X-Gitea-Signature` (HMAC-SHA256 of the body, hex), and their `X-Forgejo-*` twins.
 */
import { createHmac } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ForgeDoubleBase } from "./double-base.ts";
import type { ApiAnswer, ApiHandler } from "./double-server.ts";
import { dispatchContract } from "./example-contract.ts";
import {
  GiteaDoubleState,
  type GiteaDoubleUser,
  type GiteaPull,
  type GiteaRepo,
  type GiteaReview,
  type GiteaStatusState,
} from "./gitea-double-state.ts";
import {
  GITEA_ISSUE_COMMENT_HOOK_EXAMPLE,
  GITEA_PULL_REQUEST_HOOK_EXAMPLE,
  GITEA_STATUS_HOOK_EXAMPLE,
} from "./gitea-examples.ts";
import { type GiteaRouteContext, giteaRoutes } from "./gitea-routes.ts";

/** What Gitea's pre-receive check prints for a protected branch (git shows it after `remote:`). */
const PROTECTED = "Gitea: Not allowed to push to protected branch {branch}";

/** Gitea's HookEventType → the `X-Gitea-Event` it sends (modules/webhook/type.go, Event()). */
const HOOK_EVENTS: Record<string, string> = {
  pull_request_comment: "issue_comment",
  pull_request_review_approved: "pull_request_approved",
  pull_request_review_rejected: "pull_request_rejected",
  pull_request_review_comment: "pull_request_comment",
};

const REVIEW_HOOKS: Record<GiteaReview["state"], string> = {
  APPROVED: "pull_request_review_approved",
  REQUEST_CHANGES: "pull_request_review_rejected",
  COMMENT: "pull_request_review_comment",
  PENDING: "",
};

export class GiteaDouble extends ForgeDoubleBase {
  readonly kind = "gitea" as const;
  readonly #state: GiteaDoubleState;
  readonly #routes = giteaRoutes();
  /** `false`: the double answers as a Gitea older than 1.24 (or a Forgejo) — no Actions runs, jobs or logs API (404). */
  actionsApi = true;

  private constructor(root: string) {
    super(
      root,
      /^\/api\//,
      (status) => ({
        message:
          status === 404 ? "Not Found" : status === 429 ? "Too Many Requests" : "Internal Server Error",
        url: "https://gitea.example.org/api/swagger",
      }),
      (type, body, secret, id) => {
        const signature = createHmac("sha256", secret).update(body).digest("hex");
        const event = HOOK_EVENTS[type] ?? type;
        return {
          "x-gitea-event": event,
          "x-gitea-event-type": type,
          "x-gitea-delivery": id,
          "x-gitea-signature": signature,
          "x-forgejo-event": event,
          "x-forgejo-event-type": type,
          "x-forgejo-delivery": id,
          "x-forgejo-signature": signature,
        };
      },
    );
    this.#state = new GiteaDoubleState(this.git, () => this.url);
  }

  static async start(): Promise<GiteaDouble> {
    const double = new GiteaDouble(await mkdtemp(path.join(tmpdir(), "gitea-double-")));
    await double.server.start();
    return double;
  }

  addUser(user: GiteaDoubleUser): void {
    this.#state.users.push(user);
  }

  async createRepository(
    repository: string,
    files: Record<string, string> = { "README.md": "# demo\n" },
  ): Promise<string> {
    this.#state.repos.set(repository, {
      id: this.#state.nextId(),
      pulls: [],
      labels: [],
      statuses: [],
      runs: [],
      reviews: [],
      comments: [],
      requiredChecks: [],
      protectedBranches: [],
    });
    return this.git.create(repository, "main", files, PROTECTED);
  }

  /** Protects `branches`: pushes are refused; merges need the `requiredChecks` statuses green. */
  async protectBranch(
    repository: string,
    branches: readonly string[],
    requiredChecks: readonly string[] = [],
  ): Promise<void> {
    const repo = this.#state.repo(repository);
    repo.protectedBranches = [...branches];
    repo.requiredChecks = [...requiredChecks];
    await this.git.protect(repository, branches);
  }

  /** A label of the repository (Gitea takes label ids; a pull request can only carry existing labels). */
  addLabel(repository: string, name: string): number {
    const id = this.#state.nextId();
    this.#state.repo(repository).labels.push({ id, name });
    return id;
  }

  labelNames(repository: string, pull: GiteaPull): string[] {
    return pull.labels.map((id) => this.#state.label(repository, id).name);
  }

  pulls(repository: string): readonly GiteaPull[] {
    return this.#state.repo(repository).pulls;
  }

  /** A commit status set by an outside CI (or by hand): its link is the CI's page. */
  setStatus(
    repository: string,
    sha: string,
    status: { context: string; state: GiteaStatusState; description?: string; targetUrl?: string },
  ): void {
    const id = this.#state.nextId();
    const record = {
      id,
      sha,
      context: status.context,
      state: status.state,
      targetUrl: status.targetUrl ?? `https://ci.forge-double.test/${repository}/builds/${id}`,
      description: status.description ?? "",
    };
    this.#state.repo(repository).statuses.push(record);
    this.#hookStatus(repository, record);
  }

  /**
   * A Gitea Actions job run on `sha` as Gitea reports it: a new run of `workflow` with the job,
   * its log, and the commit status Actions sets — context `workflow / job (event)`, link to the
   * job's page, a "Failing after …" / "Successful in …" description. Answers the context.
   */
  actionsJob(
    repository: string,
    sha: string,
    job: { workflow: string; job: string; state: "success" | "failure"; log: string; branch?: string },
  ): string {
    const repo = this.#state.repo(repository);
    const run = {
      id: this.#state.nextId(),
      index: repo.runs.length + 1,
      sha,
      branch: job.branch ?? "",
      event: "pull_request",
      workflow: job.workflow,
      jobs: [{ id: this.#state.nextId(), name: job.job, conclusion: job.state, log: job.log }],
      createdAt: new Date().toISOString(),
    };
    repo.runs.push(run);
    const context = `${job.workflow} / ${job.job} (${run.event})`;
    this.setStatus(repository, sha, {
      context,
      state: job.state,
      description: job.state === "success" ? "Successful in 12s" : "Failing after 12s",
      targetUrl: `${this.url}/${repository}/actions/runs/${run.index}/jobs/0`,
    });
    return context;
  }

  /** A review by a person, each inline comment on a line of the head. */
  async review(
    repository: string,
    number: number,
    review: {
      login: string;
      state: GiteaReview["state"];
      body?: string;
      comments?: { path: string; line: number; body: string }[];
    },
  ): Promise<number> {
    const repo = this.#state.repo(repository);
    const pull = this.#state.pull(repo, number);
    const now = new Date().toISOString();
    const id = this.#state.nextId();
    repo.reviews.push({
      id,
      pull: number,
      login: review.login,
      state: review.state,
      body: review.body ?? "",
      commitId: await this.#state.headSha(repository, pull),
      submittedAt: now,
      comments: (review.comments ?? []).map((c) => ({
        ...c,
        id: this.#state.nextId(),
        resolver: null,
        createdAt: now,
      })),
    });
    const type = REVIEW_HOOKS[review.state];
    if (type)
      await this.#hookPull(
        repository,
        pull,
        "reviewed",
        { type, content: review.body ?? "" },
        review.login,
        type,
      );
    return id;
  }

  /** The conversations of a pull request as Gitea shows them: inline comments grouped by file and line, oldest first. */
  threads(
    repository: string,
    number: number,
  ): { path: string; line: number; comments: { login: string; body: string }[] }[] {
    const threads = new Map<
      string,
      { path: string; line: number; comments: { login: string; body: string }[] }
    >();
    for (const review of this.#state.repo(repository).reviews.filter((r) => r.pull === number)) {
      for (const c of review.comments) {
        const key = `${c.path}:${c.line}`;
        const thread = threads.get(key) ?? { path: c.path, line: c.line, comments: [] };
        thread.comments.push({ login: review.login, body: c.body });
        threads.set(key, thread);
      }
    }
    return [...threads.values()];
  }

  /** Marks the conversation on `path`:`line` resolved by `login`. */
  resolve(repository: string, number: number, path: string, line: number, login: string): void {
    for (const review of this.#state.repo(repository).reviews.filter((r) => r.pull === number)) {
      for (const comment of review.comments)
        if (comment.path === path && comment.line === line) comment.resolver = login;
    }
  }

  /** A comment a person writes in the pull request's conversation. */
  comment(repository: string, number: number, login: string, body: string): void {
    const comment = {
      id: this.#state.nextId(),
      pull: number,
      login,
      body,
      createdAt: new Date().toISOString(),
    };
    this.#state.repo(repository).comments.push(comment);
    this.track(this.#hookComment(repository, comment));
  }

  async mergeByHuman(
    repository: string,
    number: number,
    login: string,
    style: "merge" | "rebase" | "squash" = "merge",
  ): Promise<string> {
    const pull = this.#state.pull(this.#state.repo(repository), number);
    const answer = await this.#state.merge(repository, pull, { by: login, style, auto: false });
    if (answer.status !== 200) throw new Error(`merge refused: ${JSON.stringify(answer.body)}`);
    await this.#hookPull(repository, pull, "closed");
    return pull.mergeCommitSha ?? "";
  }

  async closeByHuman(repository: string, number: number): Promise<void> {
    const pull = this.#state.pull(this.#state.repo(repository), number);
    pull.headShaAtClose = await this.#state.headSha(repository, pull);
    pull.state = "closed";
    pull.autoMerge = null;
    pull.updatedAt = new Date().toISOString();
    await this.#hookPull(repository, pull, "closed");
  }

  /** Merges what Gitea scheduled ("merge when checks succeed") once the required statuses are green. */
  async settleAutoMerge(repository: string): Promise<void> {
    for (const pull of this.#state.repo(repository).pulls) {
      if (pull.state !== "open" || !pull.autoMerge) continue;
      const { by, style } = pull.autoMerge;
      const answer = await this.#state.merge(repository, pull, { by, style, auto: true });
      if (answer.status === 200) await this.#hookPull(repository, pull, "closed");
    }
  }

  protected override async handleApi(request: Parameters<ApiHandler>[0]): Promise<ApiAnswer | null> {
    const pathname = request.url.pathname.replace(/^\/api\/v1/, "");
    if (!this.actionsApi && /^\/repos\/[^/]+\/[^/]+\/actions\//.test(pathname))
      return { status: 404, body: { message: "Not Found", url: "" } };
    const user = this.#state.authenticate(request.headers.authorization);
    const answer = await dispatchContract<GiteaRouteContext>(
      this.#routes,
      "Gitea",
      { method: request.method, pathname, query: request.url.searchParams, body: request.body },
      (params) => {
        if (!user) return { refuse: { status: 401, body: { message: "token is required", url: "" } } };
        const repository = params.owner === undefined ? "" : `${params.owner}/${params.repo}`;
        const repo = this.#state.repos.get(repository);
        if (repository && (!repo || user.permission === "none")) {
          return { refuse: { status: 404, body: { message: "Not Found", url: "" } } };
        }
        return { ok: { user, repository, repo: repo as never, state: this.#state } };
      },
      this.server.violations,
      (problems) => ({ status: 422, body: { message: problems.join("; "), url: "" } }),
    );
    if (answer && answer.status < 300 && request.method !== "GET")
      await this.#hookApi(request.method, pathname, answer);
    return answer;
  }

  /** The webhook Gitea sends after a write through its API: a pull request opened, edited, closed or merged, or reviewed. */
  async #hookApi(method: string, pathname: string, answer: ApiAnswer): Promise<void> {
    const comment = /^\/repos\/([^/]+\/[^/]+)\/issues\/\d+\/comments$/.exec(pathname);
    const commented = (answer.body as { id?: number } | undefined)?.id;
    const stored = this.#state.repos.get(comment?.[1] ?? "")?.comments.find((c) => c.id === commented);
    if (comment?.[1] && stored) return this.#hookComment(comment[1], stored);
    const match = /^\/repos\/([^/]+)\/([^/]+)\/pulls(?:\/(\d+))?(\/[a-z]+)?$/.exec(pathname);
    if (!match) return;
    const repository = `${match[1]}/${match[2]}`;
    const number = match[3] ? Number(match[3]) : (answer.body as { number?: number } | undefined)?.number;
    const pull = this.#state.repos.get(repository)?.pulls.find((p) => p.number === number);
    if (!pull) return;
    if (match[4] === "/reviews") {
      const review = answer.body as { user: { login: string }; state: GiteaReview["state"]; body: string };
      const type = REVIEW_HOOKS[review.state];
      if (type)
        await this.#hookPull(
          repository,
          pull,
          "reviewed",
          { type, content: review.body },
          review.user.login,
          type,
        );
      return;
    }
    if (match[4] !== undefined && match[4] !== "/merge") return;
    const action = method === "POST" && !match[3] ? "opened" : pull.state === "closed" ? "closed" : "edited";
    await this.#hookPull(repository, pull, action);
  }

  async #hookPull(
    repository: string,
    pull: GiteaPull,
    action: string,
    review: { type: string; content: string } | null = null,
    sender = pull.mergedBy ?? pull.author,
    type = "pull_request",
  ): Promise<void> {
    this.deliver(type, {
      ...GITEA_PULL_REQUEST_HOOK_EXAMPLE,
      action,
      number: pull.number,
      pull_request: await this.#state.pullBody(repository, pull),
      repository: this.#state.repoBody(repository),
      sender: this.#state.user(sender),
      review,
    });
  }

  #hookStatus(repository: string, status: GiteaRepo["statuses"][number]): void {
    this.deliver("status", {
      ...GITEA_STATUS_HOOK_EXAMPLE,
      commit: {
        ...GITEA_STATUS_HOOK_EXAMPLE.commit,
        id: status.sha,
        url: `${this.url}/${repository}/commit/${status.sha}`,
      },
      context: status.context,
      description: status.description,
      id: status.id,
      repository: this.#state.repoBody(repository),
      sha: status.sha,
      state: status.state,
      target_url: status.targetUrl,
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    });
  }

  async #hookComment(repository: string, comment: GiteaRepo["comments"][number]): Promise<void> {
    const pull = this.#state.pull(this.#state.repo(repository), comment.pull);
    const body = await this.#state.pullBody(repository, pull);
    this.deliver("pull_request_comment", {
      ...GITEA_ISSUE_COMMENT_HOOK_EXAMPLE,
      issue: {
        ...GITEA_ISSUE_COMMENT_HOOK_EXAMPLE.issue,
        id: pull.id,
        number: pull.number,
        title: pull.title,
        html_url: `${this.url}/${repository}/pulls/${pull.number}`,
        url: `${this.url}/api/v1/repos/${repository}/issues/${pull.number}`,
      },
      pull_request: body,
      comment: this.#state.commentBody(repository, comment),
      repository: this.#state.repoBody(repository),
      sender: this.#state.user(comment.login),
    });
  }
}
