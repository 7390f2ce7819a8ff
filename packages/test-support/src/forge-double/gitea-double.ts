/**
 * A Gitea / Forgejo for tests (REST under `/api/v1`): its repositories are real git over smart
 * HTTP, with protected branches refused on push by a pre-receive hook in Gitea's words; every
 * REST request is checked against the parameters and body Gitea's swagger declares and every
 * answer against the shape of a swagger model typed by gitea-js, so an adapter that sends or
 * expects what Gitea does not makes `violations` non-empty. People act through its methods:
 * commit statuses, reviews with inline comments, replies and resolution, conversation comments,
 * labels, a merge or a close by hand, and Gitea's scheduled auto-merge settling. Webhooks carry
 * `X-Gitea-Event`, `X-Gitea-Delivery` and `X-Gitea-Signature` (HMAC-SHA256 of the body, hex).
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
  type GiteaReview,
  type GiteaStatusState,
} from "./gitea-double-state.ts";
import { GITEA_PULL_REQUEST_HOOK_EXAMPLE } from "./gitea-examples.ts";
import { type GiteaRouteContext, giteaRoutes } from "./gitea-routes.ts";

/** What Gitea's pre-receive check prints for a protected branch (git shows it after `remote:`). */
const PROTECTED = "Gitea: Not allowed to push to protected branch {branch}";

export class GiteaDouble extends ForgeDoubleBase {
  readonly kind = "gitea" as const;
  readonly #state: GiteaDoubleState;
  readonly #routes = giteaRoutes();

  private constructor(root: string) {
    super(
      root,
      /^\/api\//,
      (status) => ({
        message:
          status === 404 ? "Not Found" : status === 429 ? "Too Many Requests" : "Internal Server Error",
        url: "https://gitea.example.org/api/swagger",
      }),
      (event, body, secret, id) => {
        const signature = createHmac("sha256", secret).update(body).digest("hex");
        return {
          "x-gitea-event": event,
          "x-gitea-event-type": event,
          "x-gitea-delivery": id,
          "x-gitea-signature": signature,
          "x-forgejo-event": event,
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

  setStatus(repository: string, sha: string, status: { context: string; state: GiteaStatusState }): void {
    const id = this.#state.nextId();
    this.#state.repo(repository).statuses.push({
      id,
      sha,
      context: status.context,
      state: status.state,
      targetUrl: `${this.url}/${repository}/actions/runs/${id}`,
    });
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
    return id;
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
    this.#state.repo(repository).comments.push({
      id: this.#state.nextId(),
      pull: number,
      login,
      body,
      createdAt: new Date().toISOString(),
    });
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
    if (answer && answer.status < 300 && request.method !== "GET") {
      const match = /^\/repos\/([^/]+)\/([^/]+)\/pulls(?:\/(\d+))?/.exec(pathname);
      const repository = match ? `${match[1]}/${match[2]}` : "";
      const number = match?.[3] ? Number(match[3]) : (answer.body as { number?: number } | undefined)?.number;
      const pull = this.#state.repos.get(repository)?.pulls.find((p) => p.number === number);
      if (pull)
        await this.#hookPull(
          repository,
          pull,
          request.method === "POST" && !match?.[3] ? "opened" : pull.state === "closed" ? "closed" : "edited",
        );
    }
    return answer;
  }

  async #hookPull(repository: string, pull: GiteaPull, action: string): Promise<void> {
    this.deliver("pull_request", {
      ...GITEA_PULL_REQUEST_HOOK_EXAMPLE,
      action,
      number: pull.number,
      pull_request: await this.#state.pullBody(repository, pull),
      repository: this.#state.repoBody(repository),
      sender: this.#state.user(pull.mergedBy ?? pull.author),
    });
  }
}
