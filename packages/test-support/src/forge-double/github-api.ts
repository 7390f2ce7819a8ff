/**
 * The GitHub double's API front: it answers REST under `/api/v3` (each request and answer
 * validated against GitHub's OpenAPI description, `@octokit/openapi`: a request it does not
 * describe is refused 422 and recorded as a violation), GraphQL at `/api/graphql` (executed
 * against GitHub's published schema), the GitHub App routes (JWT-authenticated), and a check
 * run's log. GETs carry ETags and honour `If-None-Match`; a successful write sends its webhook.
 */

import { createHash } from "node:crypto";
import type { ApiAnswer, ApiHandler } from "./double-server.ts";
import { GitHubDoubleApps } from "./github-app-auth.ts";
import type { DoublePull, GitHubDoubleState, GitHubDoubleUser, RepoState } from "./github-double-state.ts";
import { answerGraphql } from "./github-graphql-resolvers.ts";
import type { GitHubOpenApi } from "./github-openapi.ts";
import { type Handler, isAccessRefusal, type Route } from "./github-rest-answers.ts";
import type { GitHubWebhookEvents } from "./github-webhook-events.ts";
import { hookWrite } from "./github-write-hooks.ts";
import { matchTemplate } from "./route-template.ts";

type ApiRequest = Parameters<ApiHandler>[0];

const BAD_CREDENTIALS = { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" };

export interface GitHubApiParts {
  readonly state: GitHubDoubleState;
  readonly openapi: GitHubOpenApi;
  readonly routes: readonly Route[];
  readonly apps: GitHubDoubleApps;
  readonly hooks: GitHubWebhookEvents;
  /** Where what GitHub would not send or answer is recorded (the double's `violations`). */
  readonly violations: string[];
}

export class GitHubApi {
  constructor(private readonly parts: GitHubApiParts) {}

  /** The answer to an API request, or null (404) for a path the double does not serve. */
  async answer(request: ApiRequest): Promise<ApiAnswer | null> {
    const { state, openapi, routes, violations } = this.parts;
    const { method, url } = request;
    if (url.pathname.startsWith("/api/_logs/")) {
      const id = Number(url.pathname.split("/").pop());
      const run = [...state.repos.values()].flatMap((r) => r.checkRuns).find((r) => r.id === id);
      return run ? { status: 200, text: run.log } : null;
    }
    const pathname = url.pathname.replace(/^\/api\/v3/, "");
    const appTemplate = GitHubDoubleApps.template(method, pathname);
    if (appTemplate) return this.#answerApp(appTemplate, request);
    const user = state.authenticate(request.headers.authorization);
    if (url.pathname === "/api/graphql" && method === "POST") return this.#answerGraphql(request, user);
    for (const [routeMethod, template, handler] of routes) {
      if (routeMethod !== method) continue;
      const params = matchTemplate(template, pathname);
      if (!params) continue;
      const problems = openapi.checkRequest(method, template, {
        path: params,
        query: url.searchParams,
        body: request.body,
      });
      if (problems.length > 0) {
        violations.push(...problems);
        return {
          status: 422,
          body: {
            message: "Validation Failed",
            documentation_url: "https://docs.github.com/rest",
            errors: problems,
          },
        };
      }
      const answer = await this.#answerRoute(handler, params, url.searchParams, request.body, user);
      this.#checkAnswer(method, template, answer);
      if (user && method !== "GET" && answer.status < 300)
        await hookWrite(state, this.parts.hooks, template, params, user.login);
      return method === "GET" ? conditional(answer, request.headers["if-none-match"]) : answer;
    }
    violations.push(`${method} ${pathname}: not a route of the GitHub double`);
    return null;
  }

  /** A GraphQL request; enabling auto-merge on a pull request sends `auto_merge_enabled`. */
  async #answerGraphql(request: ApiRequest, user: GitHubDoubleUser | null): Promise<ApiAnswer> {
    if (!user)
      return {
        status: 401,
        body: { ...BAD_CREDENTIALS, documentation_url: "https://docs.github.com/graphql" },
      };
    const queued = new Set(this.#allPulls().filter(({ pull }) => pull.autoMerge !== null));
    const answer = await answerGraphql(
      this.parts.state,
      request.body as { query: string; variables?: Record<string, unknown> },
      user,
      this.parts.violations,
    );
    for (const { repository, pull } of this.#allPulls()) {
      if (pull.autoMerge === null || [...queued].some((q) => q.pull === pull)) continue;
      await this.parts.hooks.pullRequest(repository, pull, "auto_merge_enabled", user.login);
    }
    return answer;
  }

  async #answerRoute(
    handler: Handler,
    params: Record<string, string>,
    query: URLSearchParams,
    body: unknown,
    user: GitHubDoubleUser | null,
  ): Promise<ApiAnswer> {
    if (!user) return { status: 401, body: BAD_CREDENTIALS };
    const fields = (body ?? {}) as Record<string, unknown>;
    if (params.owner === undefined || params.repo === undefined) {
      return handler({
        repository: "",
        state: undefined as unknown as RepoState,
        params,
        query,
        body: fields,
        user,
      });
    }
    const repository = `${params.owner}/${params.repo}`;
    const state = this.parts.state.repos.get(repository);
    if (!state || user.role === "none")
      return {
        status: 404,
        body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" },
      };
    return handler({ repository, state, params, query, body: fields, user });
  }

  /** An App route (JWT-authenticated), its request and answer checked like every other. */
  #answerApp(template: string, request: ApiRequest): ApiAnswer {
    const pathname = request.url.pathname.replace(/^\/api\/v3/, "");
    const problems = this.parts.openapi.checkRequest(request.method, template, {
      path: matchTemplate(template, pathname) ?? {},
      query: request.url.searchParams,
      body: request.body,
    });
    this.parts.violations.push(...problems);
    const answer = this.parts.apps.answer(template, pathname, request.headers.authorization);
    this.#checkAnswer(request.method, template, answer);
    return answer;
  }

  #allPulls(): { repository: string; pull: DoublePull }[] {
    return [...this.parts.state.repos.entries()].flatMap(([repository, state]) =>
      state.pulls.map((pull) => ({ repository, pull })),
    );
  }

  /** Statuses every GitHub route can answer though the description lists them per operation only sometimes. */
  #checkAnswer(method: string, template: string, answer: ApiAnswer): void {
    const generic = answer.status === 401 || (answer.status === 403 && isAccessRefusal(answer.body));
    if (generic) return;
    this.parts.violations.push(
      ...this.parts.openapi.checkResponse(method, template, answer.status, answer.body),
    );
  }
}

/**
 * GitHub's conditional requests: every 200 GET carries a strong `ETag` of its body, and a
 * request whose `If-None-Match` names it is answered 304 Not Modified without a body (GitHub
 * does not charge those to the rate limit).
 */
function conditional(answer: ApiAnswer, ifNoneMatch: string | string[] | undefined): ApiAnswer {
  if (answer.status !== 200 || answer.body === undefined) return answer;
  const etag = `"${createHash("sha256").update(JSON.stringify(answer.body)).digest("hex").slice(0, 40)}"`;
  const asked = (Array.isArray(ifNoneMatch) ? ifNoneMatch.join(",") : (ifNoneMatch ?? ""))
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""));
  if (asked.includes(etag)) return { status: 304, headers: { ...answer.headers, etag } };
  return { ...answer, headers: { ...answer.headers, etag } };
}
