/** What the GitHub double's REST routes share: their shape, and GitHub's own refusals. */

import type { ApiAnswer } from "./double-server.ts";
import type { GitHubBodies } from "./github-double-bodies.ts";
import type { GitHubDoubleState, GitHubDoubleUser, RepoState } from "./github-double-state.ts";
import type { GitHubOpenApi } from "./github-openapi.ts";

/** What a route handler works with: the double's state, its body builders and GitHub's description. */
export interface GitHubRestContext {
  readonly state: GitHubDoubleState;
  readonly bodies: GitHubBodies;
  readonly openapi: GitHubOpenApi;
}

export type Handler = (ctx: {
  repository: string;
  state: RepoState;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  user: GitHubDoubleUser;
}) => Promise<ApiAnswer> | ApiAnswer;

/** A route: method, OpenAPI path template, handler. */
export type Route = [string, string, Handler];

export function forbidden(permission: string): ApiAnswer {
  return {
    status: 403,
    body: {
      message: "Resource not accessible by personal access token",
      documentation_url: "https://docs.github.com/rest",
    },
    headers: { "x-accepted-github-permissions": permission },
  };
}

export function notFound(): ApiAnswer {
  return { status: 404, body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" } };
}

export function validationFailed(message: string, field: string, code: string): ApiAnswer {
  return {
    status: 422,
    body: {
      message: "Validation Failed",
      documentation_url: "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
      errors: [{ resource: "PullRequest", field, code, message }],
    },
  };
}

export function isAccessRefusal(body: unknown): boolean {
  return (
    typeof body === "object" &&
    body !== null &&
    "message" in body &&
    /not accessible|rate limit/i.test(String(body.message))
  );
}
