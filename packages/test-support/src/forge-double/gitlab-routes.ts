/**
 * The GitLab double's REST v4 routes: each declares the query and body GitLab documents for it
 * (strict zod from the parameter tables of doc/api/*.md) and one response shape per status
 * (`shapeOf` a documented example, see gitlab-examples.ts).
 */
import { z } from "zod";
import { type ContractRoute, shapeOf } from "./example-contract.ts";
import { gitlabCiRoutes } from "./gitlab-ci-routes.ts";
import { DEVELOPER, type GitLabMr, type GitLabProject, hashId, MAINTAINER } from "./gitlab-double-state.ts";
import {
  GITLAB_APPROVALS_EXAMPLE,
  GITLAB_CURRENT_USER_EXAMPLE,
  GITLAB_DISCUSSION_EXAMPLE,
  GITLAB_MERGE_REQUEST_EXAMPLE,
  GITLAB_MR_VERSION_EXAMPLE,
  GITLAB_NOTE_EXAMPLE,
  GITLAB_PROJECT_EXAMPLE,
  GITLAB_REVIEWER_EXAMPLE,
  GITLAB_SINGLE_MERGE_REQUEST_EXAMPLE,
  GITLAB_TOKEN_SELF_EXAMPLE,
  GITLAB_VALIDATION_ERROR_EXAMPLE,
} from "./gitlab-examples.ts";
import { gitlabIssueRoutes } from "./gitlab-issue-routes.ts";
import { gitlabNoteRoutes } from "./gitlab-note-routes.ts";
import {
  canWrite,
  denied,
  error,
  forbidden,
  type GitLabRouteContext,
  notFound,
  paging,
} from "./gitlab-route-helpers.ts";

export type { GitLabRouteContext } from "./gitlab-route-helpers.ts";

const validation = shapeOf(GITLAB_VALIDATION_ERROR_EXAMPLE);
const single = shapeOf(GITLAB_SINGLE_MERGE_REQUEST_EXAMPLE);

const MR = "/projects/{id}/merge_requests/{merge_request_iid}";

function mrOf(project: GitLabProject, params: Record<string, string>): GitLabMr | undefined {
  return project.mrs.find((m) => m.iid === Number(params.merge_request_iid));
}

export function gitlabRoutes(): ContractRoute<GitLabRouteContext>[] {
  return [
    {
      method: "GET",
      template: "/user",
      responses: { 200: shapeOf(GITLAB_CURRENT_USER_EXAMPLE), 401: error },
      handle: ({ user, state }) => ({
        status: 200,
        body: { ...GITLAB_CURRENT_USER_EXAMPLE, ...state.user(user.username) },
      }),
    },
    {
      method: "GET",
      template: "/personal_access_tokens/self",
      responses: { 200: shapeOf(GITLAB_TOKEN_SELF_EXAMPLE), 401: error },
      handle: ({ user }) => ({
        status: 200,
        body: {
          ...GITLAB_TOKEN_SELF_EXAMPLE,
          name: `${user.username} token`,
          scopes: [...(user.scopes ?? ["api", "write_repository"])],
          user_id: hashId(user.username),
        },
      }),
    },
    {
      method: "GET",
      template: "/projects/{id}",
      responses: { 200: shapeOf(GITLAB_PROJECT_EXAMPLE), ...denied },
      handle: ({ project, user, state }) => ({
        status: 200,
        body: {
          ...GITLAB_PROJECT_EXAMPLE,
          id: project.id,
          name: project.path.split("/").at(-1),
          name_with_namespace: project.path.replace(/\//g, " / "),
          path: project.path.split("/").at(-1),
          path_with_namespace: project.path,
          web_url: `${state.url()}/${project.path}`,
          http_url_to_repo: `${state.url()}/${project.path}.git`,
          only_allow_merge_if_pipeline_succeeds: project.pipelineMustSucceed,
          merge_trains_enabled: project.mergeTrains,
          permissions: {
            project_access: { access_level: user.accessLevel ?? DEVELOPER, notification_level: 3 },
            group_access: null,
          },
        },
      }),
    },
    {
      method: "GET",
      template: "/projects/{id}/merge_requests",
      query: z.strictObject({
        state: z.enum(["opened", "closed", "locked", "merged", "all"]).optional(),
        source_branch: z.string().optional(),
        target_branch: z.string().optional(),
        order_by: z.enum(["created_at", "updated_at", "title"]).optional(),
        sort: z.enum(["asc", "desc"]).optional(),
        ...paging,
      }),
      responses: { 200: z.array(shapeOf(GITLAB_MERGE_REQUEST_EXAMPLE)), ...denied },
      handle: async ({ project, query, state }) => {
        const wanted = query.get("state") ?? "all";
        const source = query.get("source_branch");
        let mrs = project.mrs.filter(
          (m) => (wanted === "all" || m.state === wanted) && (!source || m.source === source),
        );
        mrs = [...mrs].sort((a, b) => (query.get("sort") === "asc" ? a.id - b.id : b.id - a.id));
        mrs = mrs.slice(0, Number(query.get("per_page") ?? 20));
        return { status: 200, body: await Promise.all(mrs.map((m) => state.mrBody(project, m, false))) };
      },
    },
    {
      method: "POST",
      template: "/projects/{id}/merge_requests",
      body: z.strictObject({
        source_branch: z.string(),
        target_branch: z.string(),
        title: z.string(),
        description: z.string().max(1_048_576).optional(),
        labels: z.string().optional(),
        assignee_id: z.number().int().optional(),
        reviewer_ids: z.array(z.number().int()).optional(),
        remove_source_branch: z.boolean().optional(),
        squash: z.boolean().optional(),
      }),
      responses: { 201: single, 409: validation, 422: validation, ...denied },
      handle: async ({ project, body, user, state }) => {
        if (!canWrite(user)) return forbidden();
        const source = String(body.source_branch);
        if (!(await state.git.resolve(project.path, `refs/heads/${source}`))) {
          return { status: 422, body: { message: [`Source branch "${source}" does not exist`] } };
        }
        const open = project.mrs.find((m) => m.state === "opened" && m.source === source);
        if (open) {
          return {
            status: 409,
            body: {
              message: [`Another open merge request already exists for this source branch: !${open.iid}`],
            },
          };
        }
        const now = new Date().toISOString();
        const mr: GitLabMr = {
          id: state.nextId(),
          iid: project.mrs.reduce((max, m) => Math.max(max, m.iid), 0) + 1,
          title: String(body.title),
          description: typeof body.description === "string" ? body.description : null,
          source,
          target: String(body.target_branch),
          state: "opened",
          author: user.username,
          labels: typeof body.labels === "string" ? body.labels.split(",").filter(Boolean) : [],
          mergedBy: null,
          mergeCommitSha: null,
          squashCommitSha: null,
          autoMerge: null,
          shaAtClose: null,
          reviewers: [],
          approvedBy: [],
          versions: [],
          notes: [],
          createdAt: now,
          updatedAt: now,
        };
        project.mrs.push(mr);
        return { status: 201, body: await state.mrBody(project, mr, true) };
      },
    },
    {
      method: "GET",
      template: MR,
      responses: { 200: single, ...denied },
      handle: async ({ project, params, state }) => {
        const mr = mrOf(project, params);
        return mr ? { status: 200, body: await state.mrBody(project, mr, true) } : notFound("Merge Request");
      },
    },
    {
      method: "PUT",
      template: MR,
      body: z.strictObject({
        title: z.string().optional(),
        description: z.string().max(1_048_576).optional(),
        target_branch: z.string().optional(),
        labels: z.string().optional(),
        add_labels: z.string().optional(),
        remove_labels: z.string().optional(),
        state_event: z.enum(["close", "reopen"]).optional(),
        squash: z.boolean().optional(),
      }),
      responses: { 200: single, ...denied },
      handle: async ({ project, params, body, user, state }) => {
        if (!canWrite(user)) return forbidden();
        const mr = mrOf(project, params);
        if (!mr) return notFound("Merge Request");
        if (typeof body.title === "string") mr.title = body.title;
        if (typeof body.description === "string") mr.description = body.description;
        if (typeof body.target_branch === "string") mr.target = body.target_branch;
        if (typeof body.labels === "string") mr.labels = body.labels.split(",").filter(Boolean);
        if (typeof body.add_labels === "string") {
          for (const label of body.add_labels.split(","))
            if (label && !mr.labels.includes(label)) mr.labels.push(label);
        }
        if (body.state_event === "close" && mr.state === "opened") {
          state.systemNote(mr, user.username, "closed");
          mr.shaAtClose = await state.headSha(project, mr);
          mr.state = "closed";
          mr.autoMerge = null;
        }
        mr.updatedAt = new Date().toISOString();
        return { status: 200, body: await state.mrBody(project, mr, true) };
      },
    },
    {
      method: "PUT",
      template: `${MR}/merge`,
      body: z.strictObject({
        merge_commit_message: z.string().optional(),
        squash_commit_message: z.string().optional(),
        squash: z.boolean().optional(),
        should_remove_source_branch: z.boolean().optional(),
        merge_when_pipeline_succeeds: z.boolean().optional(),
        auto_merge: z.boolean().optional(),
        sha: z
          .string()
          .regex(/^[0-9a-f]{40}$/)
          .optional(),
      }),
      responses: { 200: single, 405: error, 406: error, 409: error, 422: error, ...denied },
      handle: async ({ project, params, body, user, state }) => {
        const mr = mrOf(project, params);
        if (!mr) return notFound("Merge Request");
        const level = user.accessLevel ?? DEVELOPER;
        if (!canWrite(user) || (project.protectedBranches.includes(mr.target) && level < MAINTAINER)) {
          return { status: 401, body: { message: "401 Unauthorized" } };
        }
        const squash = body.squash === true;
        return state.accept(project, mr, {
          by: user.username,
          squash,
          auto: body.auto_merge === true || body.merge_when_pipeline_succeeds === true,
          ...(typeof body.sha === "string" ? { sha: body.sha } : {}),
          ...(typeof body.squash_commit_message === "string" && squash
            ? { message: body.squash_commit_message }
            : {}),
          ...(typeof body.merge_commit_message === "string" && !squash
            ? { message: body.merge_commit_message }
            : {}),
        });
      },
    },
    {
      method: "GET",
      template: `${MR}/reviewers`,
      responses: { 200: z.array(shapeOf(GITLAB_REVIEWER_EXAMPLE)), ...denied },
      handle: ({ project, params, state }) => {
        const mr = mrOf(project, params);
        if (!mr) return notFound("Merge Request");
        return {
          status: 200,
          body: mr.reviewers.map((r) => ({
            user: state.user(r.username),
            state: r.state,
            created_at: mr.createdAt,
          })),
        };
      },
    },
    {
      method: "GET",
      template: `${MR}/approvals`,
      responses: { 200: shapeOf(GITLAB_APPROVALS_EXAMPLE), ...denied },
      handle: ({ project, params, state }) => {
        const mr = mrOf(project, params);
        if (!mr) return notFound("Merge Request");
        return {
          status: 200,
          body: {
            ...GITLAB_APPROVALS_EXAMPLE,
            id: mr.id,
            iid: mr.iid,
            project_id: project.id,
            title: mr.title,
            description: mr.description ?? "",
            state: mr.state,
            created_at: mr.createdAt,
            updated_at: mr.updatedAt,
            approved: mr.approvedBy.length > 0,
            approved_by: mr.approvedBy.map((username) => ({ user: state.user(username) })),
          },
        };
      },
    },
    {
      method: "GET",
      template: `${MR}/discussions`,
      query: z.strictObject(paging),
      responses: { 200: z.array(shapeOf(GITLAB_DISCUSSION_EXAMPLE)), ...denied },
      handle: async ({ project, params, state }) => {
        const mr = mrOf(project, params);
        if (!mr) return notFound("Merge Request");
        const threads = project.discussions.filter((d) => d.mr === mr.iid);
        return { status: 200, body: await Promise.all(threads.map((d) => state.discussionBody(project, d))) };
      },
    },
    {
      method: "GET",
      template: `${MR}/notes`,
      query: z.strictObject({
        sort: z.enum(["asc", "desc"]).optional(),
        order_by: z.enum(["created_at", "updated_at"]).optional(),
        ...paging,
      }),
      responses: { 200: z.array(shapeOf(GITLAB_NOTE_EXAMPLE)), ...denied },
      handle: ({ project, params, query, state }) => {
        const mr = mrOf(project, params);
        if (!mr) return notFound("Merge Request");
        const notes = state.notesBody(project, mr);
        return { status: 200, body: query.get("sort") === "asc" ? notes : notes.reverse() };
      },
    },
    {
      method: "GET",
      template: `${MR}/versions`,
      query: z.strictObject(paging),
      responses: { 200: z.array(shapeOf(GITLAB_MR_VERSION_EXAMPLE)), ...denied },
      handle: async ({ project, params, state }) => {
        const mr = mrOf(project, params);
        if (!mr) return notFound("Merge Request");
        await state.syncVersions(project, mr);
        return { status: 200, body: [...mr.versions].reverse().map((v) => state.versionBody(mr, v)) };
      },
    },
    ...gitlabCiRoutes(),
    ...gitlabNoteRoutes(),
    ...gitlabIssueRoutes(),
  ];
}
