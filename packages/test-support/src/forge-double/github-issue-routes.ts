/**
 * The GitHub double's REST routes for issues, and for what issues and pull requests share
 * (GitHub's "issue" side of a pull request): labels and conversation comments. Listing issues
 * lists pull requests too, each with its `pull_request` link, as GitHub does.
 */

import type { RepoState } from "./github-double-state.ts";
import { canWrite, type DoubleIssue, type DoublePull } from "./github-double-state.ts";
import { forbidden, type GitHubRestContext, notFound, type Route } from "./github-rest-answers.ts";

type Target = { kind: "issue"; item: DoubleIssue } | { kind: "pull"; item: DoublePull };

function targetOf(state: RepoState, number: number): Target | null {
  const issue = state.issues.find((i) => i.number === number);
  if (issue) return { kind: "issue", item: issue };
  const pull = state.pulls.find((p) => p.number === number);
  return pull ? { kind: "pull", item: pull } : null;
}

export function issueRoutes({ state: double, bodies, openapi }: GitHubRestContext): Route[] {
  const api = (repository: string) => `${bodies.url}/api/v3/repos/${repository}`;
  const page = (target: Target, repository: string) =>
    `${bodies.url}/${repository}/${target.kind === "issue" ? "issues" : "pull"}/${target.item.number}`;

  const issueBody = (repository: string, target: Target, state: RepoState) => {
    const { item } = target;
    const url = `${api(repository)}/issues/${item.number}`;
    const issue = target.kind === "issue" ? target.item : null;
    const assignees = issue?.assignees ?? [];
    return openapi.instanceOf("issue", {
      id: item.number * 7919,
      node_id: `I_${item.number}`,
      url,
      repository_url: api(repository),
      labels_url: `${url}/labels{/name}`,
      comments_url: `${url}/comments`,
      events_url: `${url}/events`,
      html_url: page(target, repository),
      number: item.number,
      state: item.state,
      // GitHub's description allows no null here (an enum without it): an open issue has none.
      ...(issue?.stateReason ? { state_reason: issue.stateReason } : {}),
      title: item.title,
      body: item.body,
      user: bodies.simpleUser(item.author),
      labels: item.labels.map((name) => bodies.label(name)),
      assignee: assignees[0] ? bodies.simpleUser(assignees[0]) : null,
      assignees: assignees.map((login) => bodies.simpleUser(login)),
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments: state.comments.filter((c) => c.issue === item.number).length,
      closed_at: issue ? issue.closedAt : item.state === "closed" ? item.updatedAt : null,
      created_at: item.createdAt,
      updated_at: item.updatedAt,
      author_association: "MEMBER",
      ...(target.kind === "pull"
        ? {
            pull_request: {
              url: `${api(repository)}/pulls/${item.number}`,
              html_url: `${bodies.url}/${repository}/pull/${item.number}`,
              diff_url: `${bodies.url}/${repository}/pull/${item.number}.diff`,
              patch_url: `${bodies.url}/${repository}/pull/${item.number}.patch`,
              merged_at: target.item.mergedAt,
            },
          }
        : {}),
    });
  };

  const commentBody = (repository: string, target: Target, c: RepoState["comments"][number]) =>
    openapi.instanceOf("issue-comment", {
      id: c.id,
      node_id: `IC_${c.id}`,
      body: c.body,
      user: bodies.simpleUser(c.login),
      created_at: c.createdAt,
      updated_at: c.createdAt,
      html_url: `${page(target, repository)}#issuecomment-${c.id}`,
      issue_url: `${api(repository)}/issues/${target.item.number}`,
      url: `${api(repository)}/issues/comments/${c.id}`,
      author_association: "MEMBER",
    });

  return [
    [
      "GET",
      "/repos/{owner}/{repo}/issues",
      ({ repository, state, query }) => {
        const wanted = query.get("state") ?? "open";
        const labels = (query.get("labels") ?? "").split(",").filter((l) => l !== "");
        const assignee = query.get("assignee");
        const since = query.get("since");
        const targets: Target[] = [
          ...state.issues.map((item) => ({ kind: "issue" as const, item })),
          ...state.pulls.map((item) => ({ kind: "pull" as const, item })),
        ]
          .filter(({ item }) => wanted === "all" || item.state === wanted)
          .filter(({ item }) =>
            labels.every((l) => item.labels.some((have) => have.toLowerCase() === l.toLowerCase())),
          )
          .filter((t) => !assignee || (t.kind === "issue" && t.item.assignees.includes(assignee)))
          .filter(({ item }) => !since || item.updatedAt >= since)
          .sort((a, b) => b.item.number - a.item.number);
        const perPage = Number(query.get("per_page") ?? 30);
        return { status: 200, body: targets.slice(0, perPage).map((t) => issueBody(repository, t, state)) };
      },
    ],
    [
      "GET",
      "/repos/{owner}/{repo}/issues/{issue_number}",
      ({ repository, state, params }) => {
        const target = targetOf(state, Number(params.issue_number));
        return target ? { status: 200, body: issueBody(repository, target, state) } : notFound();
      },
    ],
    [
      "PATCH",
      "/repos/{owner}/{repo}/issues/{issue_number}",
      ({ repository, state, params, body, user }) => {
        if (!canWrite(user)) return forbidden("issues=write");
        const target = targetOf(state, Number(params.issue_number));
        if (target?.kind !== "issue") return notFound();
        const issue = target.item;
        const now = new Date().toISOString();
        if (typeof body.title === "string") issue.title = body.title;
        if (typeof body.body === "string") issue.body = body.body;
        if (body.state === "closed" && issue.state === "open") {
          issue.state = "closed";
          issue.closedAt = now;
          issue.stateReason = body.state_reason === "not_planned" ? "not_planned" : "completed";
        } else if (body.state === "open" && issue.state === "closed") {
          issue.state = "open";
          issue.closedAt = null;
          issue.stateReason = "reopened";
        }
        if (Array.isArray(body.labels)) issue.labels = body.labels.map(String);
        if (Array.isArray(body.assignees)) issue.assignees = body.assignees.map(String);
        issue.updatedAt = now;
        return { status: 200, body: issueBody(repository, target, state) };
      },
    ],
    [
      "GET",
      "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
      ({ repository, state, params }) => {
        const target = targetOf(state, Number(params.issue_number));
        if (target?.kind !== "issue") return notFound();
        const blockers = target.item.blockedBy
          .map((number) => targetOf(state, number))
          .filter((t): t is Target => t !== null);
        return { status: 200, body: blockers.map((t) => issueBody(repository, t, state)) };
      },
    ],
    [
      "POST",
      "/repos/{owner}/{repo}/issues/{issue_number}/labels",
      ({ state, params, body, user }) => {
        if (!canWrite(user)) return forbidden("issues=write");
        const target = targetOf(state, Number(params.issue_number));
        if (!target) return notFound();
        const labels = (body as { labels?: string[] }).labels ?? [];
        for (const label of labels) if (!target.item.labels.includes(label)) target.item.labels.push(label);
        target.item.updatedAt = new Date().toISOString();
        return { status: 200, body: target.item.labels.map((name) => bodies.label(name)) };
      },
    ],
    [
      "DELETE",
      "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
      ({ state, params, user }) => {
        if (!canWrite(user)) return forbidden("issues=write");
        const target = targetOf(state, Number(params.issue_number));
        const name = decodeURIComponent(params.name ?? "");
        if (!target?.item.labels.includes(name))
          return {
            status: 404,
            body: { message: "Label does not exist", documentation_url: "https://docs.github.com/rest" },
          };
        target.item.labels = target.item.labels.filter((l) => l !== name);
        target.item.updatedAt = new Date().toISOString();
        return { status: 200, body: target.item.labels.map((l) => bodies.label(l)) };
      },
    ],
    [
      "GET",
      "/repos/{owner}/{repo}/issues/{issue_number}/comments",
      ({ repository, state, params, query }) => {
        const target = targetOf(state, Number(params.issue_number));
        if (!target) return notFound();
        const perPage = Number(query.get("per_page") ?? 30);
        return {
          status: 200,
          body: state.comments
            .filter((c) => c.issue === target.item.number)
            .slice(0, perPage)
            .map((c) => commentBody(repository, target, c)),
        };
      },
    ],
    [
      "POST",
      "/repos/{owner}/{repo}/issues/{issue_number}/comments",
      ({ repository, state, params, body, user }) => {
        if (!canWrite(user)) return forbidden("issues=write");
        const target = targetOf(state, Number(params.issue_number));
        if (!target) return notFound();
        const now = new Date().toISOString();
        const comment = {
          id: double.nextId(),
          issue: target.item.number,
          login: user.login,
          body: String(body.body),
          createdAt: now,
        };
        state.comments.push(comment);
        target.item.updatedAt = now;
        return { status: 201, body: commentBody(repository, target, comment) };
      },
    ],
  ];
}
