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

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { schema as githubSchema } from "@octokit/graphql-schema";
import { buildSchema, type GraphQLSchema, graphql } from "graphql";
import { DoubleGit } from "./double-git.ts";
import { type ApiAnswer, DoubleServer, type Fault } from "./double-server.ts";
import { GitHubOpenApi } from "./github-openapi.ts";
import { matchTemplate } from "./route-template.ts";

export interface GitHubDoubleUser {
  readonly login: string;
  readonly token: string;
  /** Repository role: `admin`, `write` (push), `read` or `none`. Default `write`. */
  readonly role?: "admin" | "write" | "read" | "none";
  /** Whether the token may read checks (fine-grained "Checks: read"). Default true. */
  readonly checksRead?: boolean;
}

export interface DoublePull {
  number: number;
  nodeId: string;
  head: string;
  base: string;
  title: string;
  body: string | null;
  state: "open" | "closed";
  author: string;
  labels: string[];
  mergedAt: string | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  headShaAtClose: string | null;
  autoMerge: { method: string; by: string } | null;
  createdAt: string;
  updatedAt: string;
}

interface CheckRun {
  id: number;
  name: string;
  sha: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: "success" | "failure" | "neutral" | "cancelled" | "skipped" | "timed_out" | null;
  log: string;
}

interface Review {
  id: number;
  pull: number;
  login: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED";
  body: string;
  commitId: string;
  submittedAt: string;
}

interface Thread {
  id: string;
  pull: number;
  path: string;
  line: number;
  resolved: boolean;
  comments: { id: number; login: string; body: string; createdAt: string }[];
}

interface RepoState {
  pulls: DoublePull[];
  checkRuns: CheckRun[];
  statuses: {
    sha: string;
    context: string;
    state: "error" | "failure" | "pending" | "success";
    targetUrl: string | null;
    id: number;
  }[];
  reviews: Review[];
  threads: Thread[];
  requiredChecks: string[];
}

const PROTECTED = [
  "error: GH006: Protected branch update failed for {ref}.",
  "error: Changes must be made through a pull request.",
].join("\n");

type Handler = (ctx: {
  repository: string;
  state: RepoState;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  user: GitHubDoubleUser;
}) => Promise<ApiAnswer> | ApiAnswer;

export class GitHubDouble {
  readonly kind = "github" as const;
  readonly git: DoubleGit;
  readonly #server: DoubleServer;
  readonly #openapi = GitHubOpenApi.load();
  readonly #repos = new Map<string, RepoState>();
  readonly #users: GitHubDoubleUser[] = [];
  readonly #routes: [string, string, Handler][];
  readonly #root: string;
  #nextId = 1000;

  private constructor(root: string) {
    this.#root = root;
    this.git = new DoubleGit(root);
    this.#server = new DoubleServer(
      root,
      /^\/api\//,
      (request) => this.#handle(request),
      (status) => ({
        message:
          status === 404
            ? "Not Found"
            : status === 401
              ? "Bad credentials"
              : status === 429 || status === 403
                ? "API rate limit exceeded"
                : "Server Error",
        documentation_url: "https://docs.github.com/rest",
      }),
    );
    this.#routes = this.#table();
  }

  static async start(): Promise<GitHubDouble> {
    const double = new GitHubDouble(await mkdtemp(path.join(tmpdir(), "github-double-")));
    await double.#server.start();
    return double;
  }

  /** The web URL (`forge_url`); the adapter's API base is `${url}/api/v3`. */
  get url(): string {
    return this.#server.url;
  }

  get violations(): readonly string[] {
    return this.#server.violations;
  }

  /** The contract violations found since the last call (a test asserts them empty after each case). */
  takeViolations(): string[] {
    return this.#server.violations.splice(0);
  }

  get requests() {
    return this.#server.requests;
  }

  cloneUrl(repository: string): string {
    return `${this.url}/${repository}.git`;
  }

  addUser(user: GitHubDoubleUser): void {
    this.#users.push(user);
  }

  async createRepository(
    repository: string,
    files: Record<string, string> = { "README.md": "# demo\n" },
  ): Promise<string> {
    this.#repos.set(repository, {
      pulls: [],
      checkRuns: [],
      statuses: [],
      reviews: [],
      threads: [],
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
    this.#repo(repository).requiredChecks = [...requiredChecks];
    await this.git.protect(repository, branches);
  }

  fail(fault: Fault): void {
    this.#server.fail(fault);
  }

  clearFaults(): void {
    this.#server.clearFaults();
  }

  pulls(repository: string): readonly DoublePull[] {
    return this.#repo(repository).pulls;
  }

  /** A check run on `sha` (a new run of the same name supersedes the old one); its id is its Actions job id. */
  setCheckRun(
    repository: string,
    sha: string,
    run: { name: string; conclusion: CheckRun["conclusion"]; log?: string },
  ): number {
    const id = this.#nextId++;
    this.#repo(repository).checkRuns.push({
      id,
      name: run.name,
      sha,
      status: run.conclusion === null ? "in_progress" : "completed",
      conclusion: run.conclusion,
      log: run.log ?? "",
    });
    return id;
  }

  setStatus(
    repository: string,
    sha: string,
    status: { context: string; state: "error" | "failure" | "pending" | "success" },
  ): void {
    this.#repo(repository).statuses.push({
      ...status,
      sha,
      targetUrl: `${this.url}/ci/${sha}`,
      id: this.#nextId++,
    });
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
    const state = this.#repo(repository);
    const pull = this.#pull(state, number);
    const commitId = await this.#headSha(repository, pull);
    const now = new Date().toISOString();
    state.reviews.push({
      id: this.#nextId++,
      pull: number,
      login: review.login,
      state: review.state,
      body: review.body ?? "",
      commitId,
      submittedAt: now,
    });
    for (const comment of review.comments ?? []) {
      state.threads.push({
        id: `PRRT_${this.#nextId++}`,
        pull: number,
        path: comment.path,
        line: comment.line,
        resolved: false,
        comments: [{ id: this.#nextId++, login: review.login, body: comment.body, createdAt: now }],
      });
    }
  }

  reply(repository: string, threadId: string, login: string, body: string, resolve = false): void {
    const thread = this.#repo(repository).threads.find((t) => t.id === threadId);
    if (!thread) throw new Error(`No thread ${threadId}.`);
    thread.comments.push({ id: this.#nextId++, login, body, createdAt: new Date().toISOString() });
    if (resolve) thread.resolved = true;
  }

  threads(repository: string, number: number): readonly Thread[] {
    return this.#repo(repository).threads.filter((t) => t.pull === number);
  }

  /** A person presses the merge button. */
  async mergeByHuman(
    repository: string,
    number: number,
    login: string,
    method: "merge" | "squash" | "rebase" = "merge",
  ): Promise<string> {
    const answer = await this.#mergePull(
      repository,
      this.#pull(this.#repo(repository), number),
      method,
      login,
      undefined,
    );
    if (answer.status !== 200) throw new Error(`merge refused: ${JSON.stringify(answer.body)}`);
    return (answer.body as { sha: string }).sha;
  }

  async closeByHuman(repository: string, number: number): Promise<void> {
    const pull = this.#pull(this.#repo(repository), number);
    pull.headShaAtClose = await this.git.resolve(repository, `refs/heads/${pull.head}`);
    pull.state = "closed";
    pull.updatedAt = new Date().toISOString();
  }

  async close(): Promise<void> {
    await this.#server.close();
    await rm(this.#root, { recursive: true, force: true });
  }

  #repo(repository: string): RepoState {
    const state = this.#repos.get(repository);
    if (!state) throw new Error(`The GitHub double has no repository ${repository}.`);
    return state;
  }

  #pull(state: RepoState, number: number): DoublePull {
    const pull = state.pulls.find((p) => p.number === number);
    if (!pull) throw new Error(`No pull request #${number}.`);
    return pull;
  }

  async #headSha(repository: string, pull: DoublePull): Promise<string> {
    if (pull.state === "closed" && pull.headShaAtClose) return pull.headShaAtClose;
    return (
      (await this.git.resolve(repository, `refs/heads/${pull.head}`)) ??
      "0000000000000000000000000000000000000000"
    );
  }

  async #handle(request: {
    method: string;
    url: URL;
    headers: Record<string, string | string[] | undefined>;
    body: unknown;
  }): Promise<ApiAnswer | null> {
    const { method, url } = request;
    if (url.pathname.startsWith("/api/_logs/")) {
      const id = Number(url.pathname.split("/").pop());
      const run = [...this.#repos.values()].flatMap((r) => r.checkRuns).find((r) => r.id === id);
      return run ? { status: 200, text: run.log } : null;
    }
    const user = this.#authenticate(request.headers.authorization);
    if (url.pathname === "/api/graphql" && method === "POST") {
      if (!user)
        return {
          status: 401,
          body: { message: "Bad credentials", documentation_url: "https://docs.github.com/graphql" },
        };
      return this.#graphql(request.body as { query: string; variables?: Record<string, unknown> }, user);
    }
    const pathname = url.pathname.replace(/^\/api\/v3/, "");
    for (const [routeMethod, template, handler] of this.#routes) {
      if (routeMethod !== method) continue;
      const params = matchTemplate(template, pathname);
      if (!params) continue;
      const problems = this.#openapi.checkRequest(method, template, {
        path: params,
        query: url.searchParams,
        body: request.body,
      });
      if (problems.length > 0) {
        this.#server.violations.push(...problems);
        return {
          status: 422,
          body: {
            message: "Validation Failed",
            documentation_url: "https://docs.github.com/rest",
            errors: problems,
          },
        };
      }
      const answer = await this.#answer(handler, params, url.searchParams, request.body, user);
      this.#checkAnswer(method, template, answer);
      return answer;
    }
    this.#server.violations.push(`${method} ${pathname}: not a route of the GitHub double`);
    return null;
  }

  async #answer(
    handler: Handler,
    params: Record<string, string>,
    query: URLSearchParams,
    body: unknown,
    user: GitHubDoubleUser | null,
  ): Promise<ApiAnswer> {
    if (!user)
      return {
        status: 401,
        body: { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" },
      };
    if (params.owner === undefined || params.repo === undefined) {
      return handler({
        repository: "",
        state: undefined as unknown as RepoState,
        params,
        query,
        body: (body ?? {}) as Record<string, unknown>,
        user,
      });
    }
    const repository = `${params.owner}/${params.repo}`;
    const state = this.#repos.get(repository);
    if (!state || user.role === "none")
      return {
        status: 404,
        body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" },
      };
    return handler({ repository, state, params, query, body: (body ?? {}) as Record<string, unknown>, user });
  }

  /** Statuses every GitHub route can answer though the description lists them per operation only sometimes. */
  #checkAnswer(method: string, template: string, answer: ApiAnswer): void {
    const generic = answer.status === 401 || (answer.status === 403 && isAccessRefusal(answer.body));
    if (generic) return;
    this.#server.violations.push(
      ...this.#openapi.checkResponse(method, template, answer.status, answer.body),
    );
  }

  #authenticate(header: string | string[] | undefined): GitHubDoubleUser | null {
    const value = Array.isArray(header) ? header[0] : header;
    const token = value?.replace(/^(token|bearer)\s+/i, "");
    return this.#users.find((u) => u.token === token) ?? null;
  }

  #canWrite(user: GitHubDoubleUser): boolean {
    return (user.role ?? "write") === "write" || user.role === "admin";
  }

  #table(): [string, string, Handler][] {
    const forbidden = (permission: string): ApiAnswer => ({
      status: 403,
      body: {
        message: "Resource not accessible by personal access token",
        documentation_url: "https://docs.github.com/rest",
      },
      headers: { "x-accepted-github-permissions": permission },
    });
    return [
      [
        "GET",
        "/user",
        ({ user }) => ({
          status: 200,
          body: this.#openapi.instanceOf("private-user", this.#userFields(user.login)),
        }),
      ],
      [
        "GET",
        "/repos/{owner}/{repo}",
        ({ repository, params, user }) => ({
          status: 200,
          body: this.#openapi.instanceOf("full-repository", {
            ...this.#repoFields(repository, params.owner ?? ""),
            permissions: {
              admin: user.role === "admin",
              maintain: user.role === "admin",
              push: this.#canWrite(user),
              triage: this.#canWrite(user),
              pull: true,
            },
          }),
        }),
      ],
      [
        "GET",
        "/repos/{owner}/{repo}/pulls",
        async ({ repository, state, query }) => {
          const head = query.get("head");
          const wanted = query.get("state") ?? "open";
          let pulls = state.pulls.filter((p) => wanted === "all" || p.state === wanted);
          if (head) pulls = pulls.filter((p) => `${repository.split("/")[0]}:${p.head}` === head);
          const direction = query.get("direction") ?? "desc";
          pulls = [...pulls].sort((a, b) =>
            direction === "desc" ? b.number - a.number : a.number - b.number,
          );
          const perPage = Number(query.get("per_page") ?? 30);
          return {
            status: 200,
            body: await Promise.all(
              pulls.slice(0, perPage).map((p) => this.#pullBody(repository, p, "pull-request-simple")),
            ),
          };
        },
      ],
      [
        "POST",
        "/repos/{owner}/{repo}/pulls",
        async ({ repository, state, body, user }) => {
          if (!this.#canWrite(user)) return forbidden("pull_requests=write");
          const head = String(body.head);
          const base = String(body.base);
          if (!(await this.git.resolve(repository, `refs/heads/${head}`))) {
            return validationFailed(`No commits between ${base} and ${head}`, "head", "invalid");
          }
          if (state.pulls.some((p) => p.state === "open" && p.head === head)) {
            return validationFailed(
              `A pull request already exists for ${repository.split("/")[0]}:${head}.`,
              "head",
              "custom",
            );
          }
          const now = new Date().toISOString();
          const pull: DoublePull = {
            number: this.#nextNumber(state),
            nodeId: `PR_${this.#nextId++}`,
            head,
            base,
            title: String(body.title ?? ""),
            body: typeof body.body === "string" ? body.body : null,
            state: "open",
            author: user.login,
            labels: [],
            mergedAt: null,
            mergedBy: null,
            mergeCommitSha: null,
            headShaAtClose: null,
            autoMerge: null,
            createdAt: now,
            updatedAt: now,
          };
          state.pulls.push(pull);
          return { status: 201, body: await this.#pullBody(repository, pull, "pull-request") };
        },
      ],
      [
        "GET",
        "/repos/{owner}/{repo}/pulls/{pull_number}",
        async ({ repository, state, params }) => {
          const pull = state.pulls.find((p) => p.number === Number(params.pull_number));
          if (!pull) return notFound();
          return { status: 200, body: await this.#pullBody(repository, pull, "pull-request") };
        },
      ],
      [
        "PATCH",
        "/repos/{owner}/{repo}/pulls/{pull_number}",
        async ({ repository, state, params, body, user }) => {
          if (!this.#canWrite(user)) return forbidden("pull_requests=write");
          const pull = state.pulls.find((p) => p.number === Number(params.pull_number));
          if (!pull) return notFound();
          if (typeof body.title === "string") pull.title = body.title;
          if (typeof body.body === "string") pull.body = body.body;
          if (typeof body.base === "string") pull.base = body.base;
          if (body.state === "closed" && pull.state === "open") {
            pull.headShaAtClose = await this.git.resolve(repository, `refs/heads/${pull.head}`);
            pull.state = "closed";
          }
          pull.updatedAt = new Date().toISOString();
          return { status: 200, body: await this.#pullBody(repository, pull, "pull-request") };
        },
      ],
      [
        "POST",
        "/repos/{owner}/{repo}/issues/{issue_number}/labels",
        ({ state, params, body, user }) => {
          if (!this.#canWrite(user)) return forbidden("issues=write");
          const pull = state.pulls.find((p) => p.number === Number(params.issue_number));
          if (!pull) return notFound();
          const labels = (body as { labels?: string[] }).labels ?? [];
          for (const label of labels) if (!pull.labels.includes(label)) pull.labels.push(label);
          return { status: 200, body: pull.labels.map((name) => this.#label(name)) };
        },
      ],
      [
        "GET",
        "/repos/{owner}/{repo}/commits/{ref}/check-runs",
        ({ state, params, user }) => {
          if (user.checksRead === false) return forbidden("checks=read");
          const runs = latestByName(state.checkRuns.filter((r) => r.sha === params.ref));
          return {
            status: 200,
            body: { total_count: runs.length, check_runs: runs.map((run) => this.#checkRunBody(run)) },
          };
        },
      ],
      [
        "GET",
        "/repos/{owner}/{repo}/commits/{ref}/status",
        ({ repository, state, params, user }) => {
          if (user.checksRead === false) return forbidden("statuses=read");
          const latest = new Map<string, RepoState["statuses"][number]>();
          for (const s of state.statuses.filter((s) => s.sha === params.ref)) latest.set(s.context, s);
          const statuses = [...latest.values()];
          const combined = statuses.some((s) => s.state === "failure" || s.state === "error")
            ? "failure"
            : statuses.every((s) => s.state === "success") && statuses.length > 0
              ? "success"
              : "pending";
          return {
            status: 200,
            body: this.#openapi.instanceOf("combined-commit-status", {
              state: combined,
              sha: params.ref,
              total_count: statuses.length,
              statuses: statuses.map((s) =>
                this.#openapi.instanceOf("simple-commit-status", {
                  id: s.id,
                  context: s.context,
                  state: s.state,
                  target_url: s.targetUrl,
                  description: null,
                  avatar_url: null,
                  created_at: new Date().toISOString(),
                  updated_at: new Date().toISOString(),
                  url: `${this.url}/api/v3/repos/${repository}/statuses/${params.ref}`,
                }),
              ),
              repository: this.#openapi.instanceOf(
                "minimal-repository",
                this.#repoFields(repository, params.owner ?? ""),
              ),
            }),
          };
        },
      ],
      [
        "GET",
        "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
        ({ repository, state, params }) => ({
          status: 200,
          body: state.reviews
            .filter((r) => r.pull === Number(params.pull_number))
            .map((r) =>
              this.#openapi.instanceOf("pull-request-review", {
                id: r.id,
                node_id: `PRR_${r.id}`,
                user: this.#simpleUser(r.login),
                body: r.body,
                state: r.state,
                commit_id: r.commitId,
                submitted_at: r.submittedAt,
                html_url: `${this.url}/${repository}/pull/${r.pull}#pullrequestreview-${r.id}`,
                pull_request_url: `${this.url}/api/v3/repos/${repository}/pulls/${r.pull}`,
                author_association: "MEMBER",
              }),
            ),
        }),
      ],
      [
        "PUT",
        "/repos/{owner}/{repo}/pulls/{pull_number}/merge",
        async ({ repository, state, params, body, user }) => {
          if (!this.#canWrite(user)) return forbidden("contents=write");
          const pull = state.pulls.find((p) => p.number === Number(params.pull_number));
          if (!pull) return notFound();
          const method = (body.merge_method as "merge" | "squash" | "rebase" | undefined) ?? "merge";
          return this.#mergePull(
            repository,
            pull,
            method,
            user.login,
            body.sha as string | undefined,
            body.commit_title as string | undefined,
          );
        },
      ],
      [
        "GET",
        "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs",
        ({ state, params }) => {
          const run = state.checkRuns.find((r) => r.id === Number(params.job_id));
          if (!run) return notFound();
          return { status: 302, headers: { location: `${this.url}/api/_logs/${run.id}` } };
        },
      ],
    ];
  }

  async #mergePull(
    repository: string,
    pull: DoublePull,
    method: "merge" | "squash" | "rebase",
    login: string,
    expectedSha: string | undefined,
    commitTitle?: string,
  ): Promise<ApiAnswer> {
    const state = this.#repo(repository);
    if (pull.state !== "open")
      return {
        status: 405,
        body: { message: "Pull Request is not mergeable", documentation_url: "https://docs.github.com/rest" },
      };
    const head = await this.#headSha(repository, pull);
    if (expectedSha && expectedSha !== head) {
      return {
        status: 409,
        body: {
          message: "Head branch was modified. Review and try the merge again.",
          documentation_url: "https://docs.github.com/rest",
        },
      };
    }
    for (const name of state.requiredChecks) {
      const run = latestByName(state.checkRuns.filter((r) => r.sha === head)).find((r) => r.name === name);
      const status = state.statuses.filter((s) => s.sha === head && s.context === name).at(-1);
      if (run?.conclusion !== "success" && status?.state !== "success") {
        return {
          status: 405,
          body: {
            message: `Required status check "${name}" is expected.`,
            documentation_url: "https://docs.github.com/rest",
          },
        };
      }
    }
    const merged = await this.git.merge(
      repository,
      pull.base,
      head,
      method,
      commitTitle ?? `Merge pull request #${pull.number} from ${pull.head}`,
    );
    if (!merged.sha) {
      return {
        status: 405,
        body: { message: "Pull Request is not mergeable", documentation_url: "https://docs.github.com/rest" },
      };
    }
    const now = new Date().toISOString();
    Object.assign(pull, {
      state: "closed",
      mergedAt: now,
      mergedBy: login,
      mergeCommitSha: merged.sha,
      headShaAtClose: head,
      updatedAt: now,
    });
    return {
      status: 200,
      body: { sha: merged.sha, merged: true, message: "Pull Request successfully merged" },
    };
  }

  async #pullBody(
    repository: string,
    pull: DoublePull,
    schema: "pull-request" | "pull-request-simple",
  ): Promise<Record<string, unknown>> {
    const owner = repository.split("/")[0] ?? "";
    const headSha = await this.#headSha(repository, pull);
    const baseSha = (await this.git.resolve(repository, `refs/heads/${pull.base}`)) ?? headSha;
    const repo = this.#openapi.instanceOf("repository", this.#repoFields(repository, owner));
    const api = `${this.url}/api/v3/repos/${repository}`;
    const fields: Record<string, unknown> = {
      id: Number(pull.nodeId.slice(3)),
      node_id: pull.nodeId,
      number: pull.number,
      state: pull.state,
      locked: false,
      title: pull.title,
      body: pull.body,
      user: this.#simpleUser(pull.author),
      labels: pull.labels.map((name) => this.#label(name)),
      milestone: null,
      active_lock_reason: null,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: pull.state === "closed" ? pull.updatedAt : null,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeCommitSha,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      draft: false,
      auto_merge: pull.autoMerge
        ? {
            enabled_by: this.#simpleUser(pull.autoMerge.by),
            merge_method: pull.autoMerge.method,
            commit_title: "",
            commit_message: "",
          }
        : null,
      author_association: "MEMBER",
      html_url: `${this.url}/${repository}/pull/${pull.number}`,
      url: `${api}/pulls/${pull.number}`,
      head: {
        label: `${owner}:${pull.head}`,
        ref: pull.head,
        sha: headSha,
        user: this.#simpleUser(owner),
        repo,
      },
      base: {
        label: `${owner}:${pull.base}`,
        ref: pull.base,
        sha: baseSha,
        user: this.#simpleUser(owner),
        repo,
      },
    };
    if (schema === "pull-request") {
      Object.assign(fields, {
        merged: pull.mergedAt !== null,
        mergeable: pull.state === "open" ? await this.git.mergeable(repository, pull.base, headSha) : null,
        rebaseable: null,
        mergeable_state: "unknown",
        merged_by: pull.mergedBy ? this.#simpleUser(pull.mergedBy) : null,
        comments: 0,
        review_comments: this.#repo(repository).threads.filter((t) => t.pull === pull.number).length,
        maintainer_can_modify: false,
        commits: 1,
        additions: 0,
        deletions: 0,
        changed_files: 0,
      });
    }
    return this.#openapi.instanceOf(schema, fields);
  }

  #checkRunBody(run: CheckRun): Record<string, unknown> {
    return this.#openapi.instanceOf("check-run", {
      id: run.id,
      node_id: `CR_${run.id}`,
      head_sha: run.sha,
      name: run.name,
      status: run.status,
      conclusion: run.conclusion,
      external_id: null,
      details_url: `${this.url}/actions/runs/${run.id}`,
      html_url: `${this.url}/actions/runs/${run.id}/job/${run.id}`,
      started_at: null,
      completed_at: null,
      check_suite: null,
      app: this.#openapi.instanceOf("integration", {
        slug: "github-actions",
        name: "GitHub Actions",
        id: 15368,
      }),
      pull_requests: [],
      output: {
        title: null,
        summary: null,
        text: null,
        annotations_count: 0,
        annotations_url: `${this.url}/x`,
      },
    });
  }

  #repoFields(repository: string, owner: string): Record<string, unknown> {
    const name = repository.split("/")[1] ?? "";
    return {
      id: 1,
      node_id: "R_1",
      name,
      full_name: repository,
      owner: this.#simpleUser(owner),
      private: true,
      default_branch: "main",
      html_url: `${this.url}/${repository}`,
      clone_url: this.cloneUrl(repository),
    };
  }

  #simpleUser(login: string): Record<string, unknown> {
    return this.#openapi.instanceOf("simple-user", this.#userFields(login));
  }

  #userFields(login: string): Record<string, unknown> {
    return {
      login,
      id: hashId(login),
      node_id: `U_${hashId(login)}`,
      type: login.endsWith("[bot]") ? "Bot" : "User",
      name: null,
      email: null,
    };
  }

  #label(name: string): Record<string, unknown> {
    return this.#openapi.instanceOf("label", {
      id: hashId(name),
      node_id: `LA_${hashId(name)}`,
      name,
      color: "ededed",
      default: false,
      description: "",
    });
  }

  #nextNumber(state: RepoState): number {
    return state.pulls.reduce((max, p) => Math.max(max, p.number), 0) + 1;
  }

  async #graphql(
    request: { query: string; variables?: Record<string, unknown> },
    user: GitHubDoubleUser,
  ): Promise<ApiAnswer> {
    const result = await graphql({
      schema: githubGraphqlSchema(),
      source: request.query,
      variableValues: request.variables ?? {},
      rootValue: {
        repository: ({ owner, name }: { owner: string; name: string }) => {
          const repository = `${owner}/${name}`;
          const state = this.#repos.get(repository);
          if (!state || user.role === "none") return null;
          return {
            pullRequest: ({ number }: { number: number }) => {
              if (!state.pulls.some((p) => p.number === number)) return null;
              return {
                reviewThreads: () => ({
                  nodes: state.threads
                    .filter((t) => t.pull === number)
                    .map((t) => ({
                      id: t.id,
                      isResolved: t.resolved,
                      path: t.path,
                      line: t.line,
                      comments: () => ({
                        nodes: t.comments.map((c) => ({
                          databaseId: c.id,
                          author: { __typename: "User", login: c.login },
                          body: c.body,
                          createdAt: c.createdAt,
                        })),
                      }),
                    })),
                }),
              };
            },
          };
        },
        enablePullRequestAutoMerge: ({
          input,
        }: {
          input: { pullRequestId: string; mergeMethod?: string; expectedHeadOid?: string };
        }) => {
          const found = [...this.#repos.entries()]
            .flatMap(([repository, state]) => state.pulls.map((pull) => ({ repository, pull })))
            .find(({ pull }) => pull.nodeId === input.pullRequestId);
          if (!found)
            throw new Error(`Could not resolve to a node with the global id of '${input.pullRequestId}'`);
          if (!this.#canWrite(user)) throw new Error("Resource not accessible by personal access token");
          const mergeMethod = input.mergeMethod ?? "MERGE";
          found.pull.autoMerge = { method: mergeMethod.toLowerCase(), by: user.login };
          return { pullRequest: { autoMergeRequest: { mergeMethod } } };
        },
      },
    });
    if (
      result.errors?.some((e) => /Cannot query field|Unknown argument|Unknown type|Variable/.test(e.message))
    ) {
      this.#server.violations.push(...result.errors.map((e) => `GraphQL: ${e.message}`));
    }
    return {
      status: 200,
      body: result.errors
        ? {
            data: result.data ?? null,
            errors: result.errors.map((e) => ({ message: e.message, type: "FORBIDDEN" })),
          }
        : { data: result.data },
    };
  }

  /** Applies GitHub auto-merge where it is enabled and the head became green (call after setting checks). */
  async settleAutoMerge(repository: string): Promise<void> {
    for (const pull of this.#repo(repository).pulls) {
      if (pull.state !== "open" || !pull.autoMerge) continue;
      const method = pull.autoMerge.method as "merge" | "squash" | "rebase";
      await this.#mergePull(repository, pull, method, pull.autoMerge.by, undefined);
    }
  }
}

let schemaCache: GraphQLSchema | undefined;
function githubGraphqlSchema(): GraphQLSchema {
  // GitHub's published SDL defines two fields twice; it is taken as GitHub serves it.
  schemaCache ??= buildSchema(githubSchema.idl, { assumeValidSDL: true });
  return schemaCache;
}

function latestByName(runs: readonly CheckRun[]): CheckRun[] {
  const latest = new Map<string, CheckRun>();
  for (const run of runs) latest.set(run.name, run);
  return [...latest.values()];
}

function notFound(): ApiAnswer {
  return { status: 404, body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" } };
}

function validationFailed(message: string, field: string, code: string): ApiAnswer {
  return {
    status: 422,
    body: {
      message: "Validation Failed",
      documentation_url: "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
      errors: [{ resource: "PullRequest", field, code, message }],
    },
  };
}

function isAccessRefusal(body: unknown): boolean {
  return (
    typeof body === "object" &&
    body !== null &&
    "message" in body &&
    /not accessible|rate limit/i.test(String(body.message))
  );
}

function hashId(text: string): number {
  let h = 7;
  for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) % 1_000_000;
  return h + 1;
}
