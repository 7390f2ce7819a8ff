/** The GitHub double's REST routes for checks: check runs, combined commit status, Actions job logs. */

import { latestByName, type RepoState } from "./github-double-state.ts";
import { forbidden, type GitHubRestContext, notFound, type Route } from "./github-rest-answers.ts";

export function checkRoutes({ bodies, openapi }: GitHubRestContext): Route[] {
  return [
    [
      "GET",
      "/repos/{owner}/{repo}/commits/{ref}/check-runs",
      ({ state, params, user }) => {
        if (user.checksRead === false) return forbidden("checks=read");
        const runs = latestByName(state.checkRuns.filter((r) => r.sha === params.ref));
        return {
          status: 200,
          body: { total_count: runs.length, check_runs: runs.map((run) => bodies.checkRunBody(run)) },
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
          body: openapi.instanceOf("combined-commit-status", {
            state: combined,
            sha: params.ref,
            total_count: statuses.length,
            statuses: statuses.map((s) =>
              openapi.instanceOf("simple-commit-status", {
                id: s.id,
                context: s.context,
                state: s.state,
                target_url: s.targetUrl,
                description: null,
                avatar_url: null,
                created_at: s.createdAt,
                updated_at: s.createdAt,
                url: `${bodies.url}/api/v3/repos/${repository}/statuses/${params.ref}`,
              }),
            ),
            repository: openapi.instanceOf(
              "minimal-repository",
              bodies.repoFields(repository, params.owner ?? ""),
            ),
          }),
        };
      },
    ],
    [
      "GET",
      "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs",
      ({ state, params }) => {
        const run = state.checkRuns.find((r) => r.id === Number(params.job_id));
        if (!run) return notFound();
        return { status: 302, headers: { location: `${bodies.url}/api/_logs/${run.id}` } };
      },
    ],
  ];
}
