/**
 * What every GitLab double route module shares: the route context, the path and paging
 * parameters, the documented error shape and the answers for a refused or missing resource.
 * Its own module so the route families (gitlab-routes.ts, gitlab-ci-routes.ts,
 * gitlab-note-routes.ts) import it without importing each other.
 */
import { z } from "zod";
import type { ApiAnswer } from "./double-server.ts";
import { shapeOf } from "./example-contract.ts";
import {
  DEVELOPER,
  type GitLabDoubleState,
  type GitLabDoubleUser,
  type GitLabProject,
} from "./gitlab-double-state.ts";
import { GITLAB_ERROR_EXAMPLE } from "./gitlab-examples.ts";
import type { GitLabIssueStore } from "./gitlab-issue-state.ts";

export interface GitLabRouteContext {
  readonly user: GitLabDoubleUser;
  /** The project a `/projects/{id}/…` route names (undefined elsewhere). */
  readonly project: GitLabProject;
  readonly state: GitLabDoubleState;
  /** The projects' issues (gitlab-issue-routes.ts). */
  readonly issues: GitLabIssueStore;
}

export const int = z.string().regex(/^\d+$/);
export const paging = { page: int.optional(), per_page: int.optional() };
export const error = shapeOf(GITLAB_ERROR_EXAMPLE);
export const denied = { 401: error, 403: error, 404: error };

export function forbidden(): ApiAnswer {
  return { status: 403, body: { message: "403 Forbidden" } };
}

export function notFound(what: string): ApiAnswer {
  return { status: 404, body: { message: `404 ${what} Not Found` } };
}

export function canWrite(user: GitLabDoubleUser): boolean {
  return (user.accessLevel ?? DEVELOPER) >= DEVELOPER && (user.scopes ?? ["api"]).includes("api");
}
