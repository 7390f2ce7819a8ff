/**
 * The Gitea double's Actions routes (Gitea ≥ 1.24: `getWorkflowRuns`, `listWorkflowRunJobs`,
 * `downloadActionsRunJobLogs`), each with the query parameters Gitea's swagger declares and the
 * shapes of gitea-examples.ts; a job's log is plain text, as Gitea serves it.
 */
import { z } from "zod";
import { type ContractRoute, shapeOf } from "./example-contract.ts";
import { error, type GiteaRouteContext } from "./gitea-double-state.ts";
import {
  GITEA_ACTION_JOBS_EXAMPLE,
  GITEA_ACTION_RUNS_EXAMPLE,
  GITEA_ERROR_EXAMPLE,
} from "./gitea-examples.ts";

const int = z.string().regex(/^\d+$/);
const apiError = shapeOf(GITEA_ERROR_EXAMPLE);
const REPO = "/repos/{owner}/{repo}";
const STATUS = z.enum(["requested", "pending", "queued", "in_progress", "failure", "success", "skipped"]);

function page<T>(items: readonly T[], query: URLSearchParams): T[] {
  const limit = Number(query.get("limit") ?? 30);
  const at = Number(query.get("page") ?? 1);
  return items.slice((at - 1) * limit, at * limit);
}

export function giteaActionsRoutes(): ContractRoute<GiteaRouteContext>[] {
  return [
    {
      method: "GET",
      template: `${REPO}/actions/runs`,
      query: z.strictObject({
        event: z.string().optional(),
        branch: z.string().optional(),
        status: STATUS.optional(),
        actor: z.string().optional(),
        head_sha: z.string().optional(),
        page: int.optional(),
        limit: int.optional(),
      }),
      responses: { 200: shapeOf(GITEA_ACTION_RUNS_EXAMPLE), 400: apiError, 404: apiError },
      handle: ({ repository, repo, query, state }) => {
        const sha = query.get("head_sha");
        const runs = [...repo.runs].reverse().filter((r) => sha === null || r.sha === sha);
        return {
          status: 200,
          body: {
            workflow_runs: page(runs, query).map((r) => state.runBody(repository, r)),
            total_count: runs.length,
          },
        };
      },
    },
    {
      method: "GET",
      template: `${REPO}/actions/runs/{run}/jobs`,
      query: z.strictObject({ status: STATUS.optional(), page: int.optional(), limit: int.optional() }),
      responses: { 200: shapeOf(GITEA_ACTION_JOBS_EXAMPLE), 400: apiError, 404: apiError },
      handle: ({ repository, repo, params, query, state }) => {
        const run = repo.runs.find((r) => r.id === Number(params.run));
        if (!run) return error(404, "Not Found");
        const jobs = run.jobs.map((_, index) => state.jobBody(repository, run, index));
        return { status: 200, body: { jobs: page(jobs, query), total_count: jobs.length } };
      },
    },
    {
      method: "GET",
      template: `${REPO}/actions/jobs/{job_id}/logs`,
      responses: { 200: "text", 400: apiError, 404: apiError },
      handle: ({ repo, params }) => {
        const job = repo.runs.flatMap((r) => r.jobs).find((j) => j.id === Number(params.job_id));
        return job ? { status: 200, text: job.log } : error(404, "Not Found");
      },
    },
  ];
}
