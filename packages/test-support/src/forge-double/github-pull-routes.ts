/** The GitHub double's REST routes for the user, the repository and its pull requests (reviews, merge); labels and conversation comments are github-issue-routes.ts'. */

import { mergePull } from "./github-double-merge.ts";
import { canWrite, type DoublePull } from "./github-double-state.ts";
import {
  forbidden,
  type GitHubRestContext,
  notFound,
  type Route,
  validationFailed,
} from "./github-rest-answers.ts";

export function pullRoutes({ state: double, bodies, openapi }: GitHubRestContext): Route[] {
  return [
    [
      "GET",
      "/user",
      ({ user }) => ({
        status: 200,
        body: openapi.instanceOf("private-user", bodies.userFields(user.login)),
      }),
    ],
    [
      "GET",
      "/repos/{owner}/{repo}",
      ({ repository, params, user }) => ({
        status: 200,
        body: openapi.instanceOf("full-repository", {
          ...bodies.repoFields(repository, params.owner ?? ""),
          permissions: {
            admin: user.role === "admin",
            maintain: user.role === "admin",
            push: canWrite(user),
            triage: canWrite(user),
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
        pulls = [...pulls].sort((a, b) => (direction === "desc" ? b.number - a.number : a.number - b.number));
        const perPage = Number(query.get("per_page") ?? 30);
        return {
          status: 200,
          body: await Promise.all(
            pulls.slice(0, perPage).map((p) => bodies.pullBody(repository, p, "pull-request-simple")),
          ),
        };
      },
    ],
    [
      "POST",
      "/repos/{owner}/{repo}/pulls",
      async ({ repository, state, body, user }) => {
        if (!canWrite(user)) return forbidden("pull_requests=write");
        const head = String(body.head);
        const base = String(body.base);
        if (!(await double.git.resolve(repository, `refs/heads/${head}`))) {
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
          number: double.nextNumber(state),
          nodeId: `PR_${double.nextId()}`,
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
        return { status: 201, body: await bodies.pullBody(repository, pull, "pull-request") };
      },
    ],
    [
      "GET",
      "/repos/{owner}/{repo}/pulls/{pull_number}",
      async ({ repository, state, params }) => {
        const pull = state.pulls.find((p) => p.number === Number(params.pull_number));
        if (!pull) return notFound();
        return { status: 200, body: await bodies.pullBody(repository, pull, "pull-request") };
      },
    ],
    [
      "PATCH",
      "/repos/{owner}/{repo}/pulls/{pull_number}",
      async ({ repository, state, params, body, user }) => {
        if (!canWrite(user)) return forbidden("pull_requests=write");
        const pull = state.pulls.find((p) => p.number === Number(params.pull_number));
        if (!pull) return notFound();
        if (typeof body.title === "string") pull.title = body.title;
        if (typeof body.body === "string") pull.body = body.body;
        if (typeof body.base === "string") pull.base = body.base;
        if (body.state === "closed" && pull.state === "open") {
          pull.headShaAtClose = await double.git.resolve(repository, `refs/heads/${pull.head}`);
          pull.state = "closed";
        }
        pull.updatedAt = new Date().toISOString();
        return { status: 200, body: await bodies.pullBody(repository, pull, "pull-request") };
      },
    ],
    [
      "POST",
      "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
      ({ repository, state, params, body, user }) => {
        if (!canWrite(user)) return forbidden("pull_requests=write");
        const number = Number(params.pull_number);
        const thread = state.threads.find(
          (t) => t.pull === number && t.comments[0]?.id === Number(params.comment_id),
        );
        const pull = state.pulls.find((p) => p.number === number);
        if (!thread || !pull) return notFound();
        const now = new Date().toISOString();
        const id = double.nextId();
        thread.comments.push({ id, login: user.login, body: String(body.body), createdAt: now });
        pull.updatedAt = now;
        return {
          status: 201,
          body: openapi.instanceOf("pull-request-review-comment", {
            id,
            node_id: `PRRC_${id}`,
            body: String(body.body),
            path: thread.path,
            line: thread.line,
            in_reply_to_id: thread.comments[0]?.id,
            user: bodies.simpleUser(user.login),
            created_at: now,
            updated_at: now,
            html_url: `${bodies.url}/${repository}/pull/${number}#discussion_r${id}`,
            pull_request_url: `${bodies.url}/api/v3/repos/${repository}/pulls/${number}`,
            url: `${bodies.url}/api/v3/repos/${repository}/pulls/comments/${id}`,
            author_association: "MEMBER",
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
            openapi.instanceOf("pull-request-review", {
              id: r.id,
              node_id: `PRR_${r.id}`,
              user: bodies.simpleUser(r.login),
              body: r.body,
              state: r.state,
              commit_id: r.commitId,
              submitted_at: r.submittedAt,
              html_url: `${bodies.url}/${repository}/pull/${r.pull}#pullrequestreview-${r.id}`,
              pull_request_url: `${bodies.url}/api/v3/repos/${repository}/pulls/${r.pull}`,
              author_association: "MEMBER",
            }),
          ),
      }),
    ],
    [
      "PUT",
      "/repos/{owner}/{repo}/pulls/{pull_number}/merge",
      async ({ repository, state, params, body, user }) => {
        if (!canWrite(user)) return forbidden("contents=write");
        const pull = state.pulls.find((p) => p.number === Number(params.pull_number));
        if (!pull) return notFound();
        const method = (body.merge_method as "merge" | "squash" | "rebase" | undefined) ?? "merge";
        return mergePull(
          double,
          repository,
          pull,
          method,
          user.login,
          body.sha as string | undefined,
          body.commit_title as string | undefined,
        );
      },
    ],
  ];
}
