/**
 * The Gitea double's REST v1 routes: each declares the query parameters and body Gitea's
 * swagger declares for the operation (strict zod) and one response shape per status the
 * swagger lists (`shapeOf` an example typed by gitea-js, see gitea-examples.ts).
 */
import { z } from "zod";
import type { ApiAnswer } from "./double-server.ts";
import { type ContractRoute, shapeOf } from "./example-contract.ts";
import { giteaActionsRoutes } from "./gitea-actions-routes.ts";
import {
  error,
  type GiteaDoubleUser,
  type GiteaPull,
  type GiteaRepo,
  type GiteaRouteContext,
} from "./gitea-double-state.ts";
import {
  GITEA_COMMENT_EXAMPLE,
  GITEA_ERROR_EXAMPLE,
  GITEA_LABEL_EXAMPLE,
  GITEA_PULL_EXAMPLE,
  GITEA_REPOSITORY_EXAMPLE,
  GITEA_REVIEW_COMMENT_EXAMPLE,
  GITEA_REVIEW_EXAMPLE,
  GITEA_STATUS_EXAMPLE,
  GITEA_USER_EXAMPLE,
} from "./gitea-examples.ts";

export type { GiteaRouteContext };

const int = z.string().regex(/^\d+$/);
const paging = { page: int.optional(), limit: int.optional() };
const apiError = shapeOf(GITEA_ERROR_EXAMPLE);
const pullShape = shapeOf(GITEA_PULL_EXAMPLE);
const denied = { 401: apiError, 403: apiError, 404: apiError };
const REPO = "/repos/{owner}/{repo}";
const PULL = `${REPO}/pulls/{index}`;

function canWrite(user: GiteaDoubleUser): boolean {
  return (user.permission ?? "write") === "write" || user.permission === "admin";
}

function pullOf(repo: GiteaRepo, params: Record<string, string>): GiteaPull | undefined {
  return repo.pulls.find((p) => p.number === Number(params.index));
}

async function pullAnswer(status: number, ctx: GiteaRouteContext, pull: GiteaPull): Promise<ApiAnswer> {
  return { status, body: await ctx.state.pullBody(ctx.repository, pull) };
}

export function giteaRoutes(): ContractRoute<GiteaRouteContext>[] {
  return [
    {
      method: "GET",
      template: "/user",
      responses: { 200: shapeOf(GITEA_USER_EXAMPLE), 401: apiError },
      handle: ({ user, state }) => ({ status: 200, body: state.user(user.login) }),
    },
    {
      method: "GET",
      template: REPO,
      responses: { 200: shapeOf(GITEA_REPOSITORY_EXAMPLE), ...denied },
      handle: ({ repository, user, state }) => ({ status: 200, body: state.repoBody(repository, user) }),
    },
    {
      method: "GET",
      template: `${REPO}/labels`,
      query: z.strictObject(paging),
      responses: { 200: z.array(shapeOf(GITEA_LABEL_EXAMPLE)), ...denied },
      handle: ({ repository, repo, state }) => ({
        status: 200,
        body: repo.labels.map((l) => state.label(repository, l.id)),
      }),
    },
    {
      method: "POST",
      template: `${REPO}/labels`,
      body: z.strictObject({
        name: z.string(),
        color: z.string(),
        description: z.string().optional(),
        exclusive: z.boolean().optional(),
        is_archived: z.boolean().optional(),
      }),
      responses: { 201: shapeOf(GITEA_LABEL_EXAMPLE), 422: apiError, ...denied },
      handle: ({ repository, repo, body, user, state }) => {
        if (!canWrite(user)) return error(403, "user should have permission to write to issues");
        // Gitea's CreateLabel: a colour of 6 hex digits, with or without '#'.
        if (!/^#?[0-9a-fA-F]{6}$/.test(String(body.color))) return error(422, "Color: invalid color");
        const id = state.nextId();
        repo.labels.push({ id, name: String(body.name) });
        return { status: 201, body: state.label(repository, id) };
      },
    },
    {
      method: "GET",
      template: `${REPO}/pulls`,
      query: z.strictObject({
        state: z.enum(["open", "closed", "all"]).optional(),
        sort: z
          .enum(["oldest", "recentupdate", "leastupdate", "mostcomment", "leastcomment", "priority"])
          .optional(),
        milestone: int.optional(),
        "labels[]": z.array(int).optional(),
        poster: z.string().optional(),
        ...paging,
      }),
      responses: { 200: z.array(pullShape), ...denied },
      handle: async ({ repository, repo, query, state }) => {
        const wanted = query.get("state") ?? "open";
        let pulls = repo.pulls.filter((p) => wanted === "all" || p.state === wanted);
        pulls = [...pulls].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.number - a.number);
        const limit = Number(query.get("limit") ?? 30);
        const page = Number(query.get("page") ?? 1);
        pulls = pulls.slice((page - 1) * limit, page * limit);
        return { status: 200, body: await Promise.all(pulls.map((p) => state.pullBody(repository, p))) };
      },
    },
    {
      method: "POST",
      template: `${REPO}/pulls`,
      body: z.strictObject({
        head: z.string(),
        base: z.string(),
        title: z.string(),
        body: z.string().optional(),
        labels: z.array(z.number().int()).optional(),
        assignee: z.string().optional(),
        assignees: z.array(z.string()).optional(),
        reviewers: z.array(z.string()).optional(),
        milestone: z.number().int().optional(),
        due_date: z.string().optional(),
      }),
      responses: { 201: pullShape, 409: apiError, 422: apiError, ...denied },
      handle: async (ctx) => {
        const { repository, repo, body, user, state } = ctx;
        if (!canWrite(user)) return error(403, "user should have permission to write to pull requests");
        const head = String(body.head);
        const base = String(body.base);
        if (!(await state.git.resolve(repository, `refs/heads/${head}`))) return error(404, "Not Found");
        const open = repo.pulls.find((p) => p.state === "open" && p.head === head && p.base === base);
        if (open) {
          return error(
            409,
            `pull request already exists for these targets [id: ${open.id}, issue_id: ${open.id}, head_repo_id: ${repo.id}, base_repo_id: ${repo.id}, head_branch: ${head}, base_branch: ${base}]`,
          );
        }
        const now = new Date().toISOString();
        const pull: GiteaPull = {
          number: repo.pulls.reduce((max, p) => Math.max(max, p.number), 0) + 1,
          id: state.nextId(),
          head,
          base,
          title: String(body.title),
          body: typeof body.body === "string" ? body.body : "",
          state: "open",
          author: user.login,
          labels: Array.isArray(body.labels) ? (body.labels as number[]) : [],
          merged: false,
          mergedBy: null,
          mergeCommitSha: null,
          headShaAtClose: null,
          autoMerge: null,
          createdAt: now,
          updatedAt: now,
        };
        repo.pulls.push(pull);
        return pullAnswer(201, ctx, pull);
      },
    },
    {
      method: "GET",
      template: PULL,
      responses: { 200: pullShape, ...denied },
      handle: (ctx) => {
        const pull = pullOf(ctx.repo, ctx.params);
        return pull ? pullAnswer(200, ctx, pull) : error(404, "Not Found");
      },
    },
    {
      method: "PATCH",
      template: PULL,
      body: z.strictObject({
        title: z.string().optional(),
        body: z.string().optional(),
        base: z.string().optional(),
        state: z.enum(["open", "closed"]).optional(),
        labels: z.array(z.number().int()).optional(),
        assignee: z.string().optional(),
        assignees: z.array(z.string()).optional(),
        milestone: z.number().int().optional(),
        due_date: z.string().optional(),
        unset_due_date: z.boolean().optional(),
        allow_maintainer_edit: z.boolean().optional(),
      }),
      responses: { 201: pullShape, 409: apiError, 412: apiError, 422: apiError, ...denied },
      handle: async (ctx) => {
        const { repository, body, user, state } = ctx;
        if (!canWrite(user)) return error(403, "user should have permission to write to pull requests");
        const pull = pullOf(ctx.repo, ctx.params);
        if (!pull) return error(404, "Not Found");
        if (typeof body.title === "string") pull.title = body.title;
        if (typeof body.body === "string") pull.body = body.body;
        if (typeof body.base === "string" && body.base !== pull.base) {
          if (!(await state.git.resolve(repository, `refs/heads/${body.base}`)))
            return error(404, "Not Found");
          pull.base = body.base;
        }
        if (Array.isArray(body.labels)) pull.labels = body.labels as number[];
        if (body.state === "closed" && pull.state === "open") {
          pull.headShaAtClose = await state.headSha(repository, pull);
          pull.state = "closed";
          pull.autoMerge = null;
        }
        pull.updatedAt = new Date().toISOString();
        return pullAnswer(201, ctx, pull);
      },
    },
    {
      method: "POST",
      template: `${PULL}/merge`,
      body: z.strictObject({
        Do: z.enum(["merge", "rebase", "rebase-merge", "squash", "fast-forward-only", "manually-merged"]),
        MergeCommitID: z.string().optional(),
        MergeMessageField: z.string().optional(),
        MergeTitleField: z.string().optional(),
        delete_branch_after_merge: z.boolean().optional(),
        force_merge: z.boolean().optional(),
        head_commit_id: z.string().optional(),
        merge_when_checks_succeed: z.boolean().optional(),
      }),
      responses: { 200: "empty", 201: "empty", 405: apiError, 409: apiError, ...denied },
      handle: ({ repository, repo, params, body, user, state }) => {
        const pull = pullOf(repo, params);
        if (!pull) return error(404, "Not Found");
        if (!canWrite(user)) return error(405, "User not allowed to merge PR");
        const style = body.Do === "squash" ? "squash" : body.Do === "rebase" ? "rebase" : "merge";
        return state.merge(repository, pull, {
          by: user.login,
          style,
          auto: body.merge_when_checks_succeed === true,
          ...(typeof body.head_commit_id === "string" ? { sha: body.head_commit_id } : {}),
          ...(typeof body.MergeTitleField === "string" ? { title: body.MergeTitleField } : {}),
        });
      },
    },
    {
      method: "GET",
      template: `${REPO}/commits/{ref}/statuses`,
      query: z.strictObject({
        sort: z.enum(["oldest", "recentupdate", "leastupdate", "leastindex", "highestindex"]).optional(),
        state: z.enum(["pending", "success", "error", "failure", "warning"]).optional(),
        ...paging,
      }),
      responses: { 200: z.array(shapeOf(GITEA_STATUS_EXAMPLE)), 400: apiError, ...denied },
      handle: ({ repository, repo, params, state }) => ({
        status: 200,
        body: repo.statuses
          .filter((s) => s.sha === params.ref)
          .reverse()
          .map((s) => state.statusBody(repository, s)),
      }),
    },
    {
      method: "GET",
      template: `${PULL}/reviews`,
      query: z.strictObject(paging),
      responses: { 200: z.array(shapeOf(GITEA_REVIEW_EXAMPLE)), ...denied },
      handle: ({ repository, repo, params, state }) => {
        const pull = pullOf(repo, params);
        if (!pull) return error(404, "Not Found");
        const reviews = repo.reviews.filter((r) => r.pull === pull.number);
        return { status: 200, body: reviews.map((r) => state.reviewBody(repository, r)) };
      },
    },
    {
      method: "POST",
      template: `${PULL}/reviews`,
      body: z.strictObject({
        body: z.string().optional(),
        comments: z
          .array(
            z.strictObject({
              body: z.string().optional(),
              new_position: z.number().int().optional(),
              old_position: z.number().int().optional(),
              path: z.string().optional(),
            }),
          )
          .optional(),
        commit_id: z.string().optional(),
        event: z.enum(["APPROVED", "PENDING", "COMMENT", "REQUEST_CHANGES", "REQUEST_REVIEW", ""]).optional(),
      }),
      responses: { 200: shapeOf(GITEA_REVIEW_EXAMPLE), 422: apiError, ...denied },
      handle: async ({ repository, repo, params, body, user, state }) => {
        const pull = pullOf(repo, params);
        if (!pull) return error(404, "Not Found");
        const event = (body.event as string | undefined) || "PENDING";
        const comments = (body.comments ?? []) as { body?: string; new_position?: number; path?: string }[];
        const text = typeof body.body === "string" ? body.body : "";
        // Gitea refuses approving or rejecting one's own pull request; a comment needs content.
        if (pull.author === user.login && (event === "APPROVED" || event === "REQUEST_CHANGES"))
          return error(422, `${event === "APPROVED" ? "approve" : "reject"} your own pull is not allowed`);
        if (
          (event === "COMMENT" || event === "REQUEST_CHANGES") &&
          text.trim() === "" &&
          comments.length === 0
        )
          return error(422, "review event COMMENT requires a body or a comment");
        if (event !== "APPROVED" && event !== "REQUEST_CHANGES" && event !== "COMMENT")
          return error(422, `the double does not keep ${event} reviews`);
        const now = new Date().toISOString();
        const review = {
          id: state.nextId(),
          pull: pull.number,
          login: user.login,
          state: event,
          body: text,
          commitId:
            typeof body.commit_id === "string" ? body.commit_id : await state.headSha(repository, pull),
          submittedAt: now,
          comments: comments.map((c) => ({
            id: state.nextId(),
            path: c.path ?? "",
            line: c.new_position ?? 0,
            body: c.body ?? "",
            resolver: null,
            createdAt: now,
          })),
        } satisfies GiteaRepo["reviews"][number];
        repo.reviews.push(review);
        return { status: 200, body: state.reviewBody(repository, review) };
      },
    },
    {
      method: "GET",
      template: `${PULL}/reviews/{id}/comments`,
      responses: { 200: z.array(shapeOf(GITEA_REVIEW_COMMENT_EXAMPLE)), ...denied },
      handle: ({ repository, repo, params, state }) => {
        const review = repo.reviews.find(
          (r) => r.id === Number(params.id) && r.pull === Number(params.index),
        );
        if (!review) return error(404, "Not Found");
        return {
          status: 200,
          body: review.comments.map((c) => state.reviewCommentBody(repository, review, c)),
        };
      },
    },
    {
      method: "GET",
      template: `${REPO}/issues/{index}/comments`,
      query: z.strictObject({ since: z.string().optional(), before: z.string().optional() }),
      responses: { 200: z.array(shapeOf(GITEA_COMMENT_EXAMPLE)), ...denied },
      handle: ({ repository, repo, params, state }) => {
        const pull = pullOf(repo, params);
        if (!pull) return error(404, "Not Found");
        const comments = repo.comments.filter((c) => c.pull === pull.number);
        return { status: 200, body: comments.map((c) => state.commentBody(repository, c)) };
      },
    },
    {
      method: "POST",
      template: `${REPO}/issues/{index}/comments`,
      body: z.strictObject({ body: z.string() }),
      responses: { 201: shapeOf(GITEA_COMMENT_EXAMPLE), 423: apiError, ...denied },
      handle: ({ repository, repo, params, body, user, state }) => {
        const pull = pullOf(repo, params);
        if (!pull) return error(404, "Not Found");
        const comment = {
          id: state.nextId(),
          pull: pull.number,
          login: user.login,
          body: String(body.body),
          createdAt: new Date().toISOString(),
        };
        repo.comments.push(comment);
        return { status: 201, body: state.commentBody(repository, comment) };
      },
    },
    ...giteaActionsRoutes(),
  ];
}
