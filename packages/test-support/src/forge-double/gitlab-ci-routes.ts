/**
 * The GitLab double's CI routes (doc/api/pipelines.md, jobs.md, commits.md): pipelines of a
 * sha, the jobs of a pipeline, a job's trace, the statuses of a commit (jobs and external
 * statuses alike, the latest of each name unless `all`), and the merge requests a commit is in.
 */
import { z } from "zod";
import { type ContractRoute, shapeOf } from "./example-contract.ts";
import {
  GITLAB_COMMIT_STATUS_EXAMPLE,
  GITLAB_JOB_EXAMPLE,
  GITLAB_MERGE_REQUEST_EXAMPLE,
  GITLAB_PIPELINE_EXAMPLE,
} from "./gitlab-examples.ts";
import type { GitLabRouteContext } from "./gitlab-route-helpers.ts";
import { denied, int, notFound, paging } from "./gitlab-route-helpers.ts";

const bool = z.enum(["true", "false"]);
const COMMIT = "/projects/{id}/repository/commits/{sha}";

export function gitlabCiRoutes(): ContractRoute<GitLabRouteContext>[] {
  return [
    {
      method: "GET",
      template: "/projects/{id}/pipelines",
      query: z.strictObject({
        sha: z.string().optional(),
        ref: z.string().optional(),
        status: z.string().optional(),
        order_by: z.enum(["id", "status", "ref", "updated_at", "user_id"]).optional(),
        sort: z.enum(["asc", "desc"]).optional(),
        ...paging,
      }),
      responses: { 200: z.array(shapeOf(GITLAB_PIPELINE_EXAMPLE)), ...denied },
      handle: ({ project, query, state }) => {
        const sha = query.get("sha");
        let pipelines = project.pipelines.filter((p) => !sha || p.sha === sha);
        pipelines = [...pipelines].sort((a, b) => (query.get("sort") === "asc" ? a.id - b.id : b.id - a.id));
        pipelines = pipelines.slice(0, Number(query.get("per_page") ?? 20));
        return { status: 200, body: pipelines.map((p) => state.pipelineBody(project, p)) };
      },
    },
    {
      method: "GET",
      template: "/projects/{id}/pipelines/{pipeline_id}/jobs",
      query: z.strictObject({
        "scope[]": z.array(z.string()).optional(),
        include_retried: bool.optional(),
        ...paging,
      }),
      responses: { 200: z.array(shapeOf(GITLAB_JOB_EXAMPLE)), ...denied },
      handle: ({ project, params, state }) => {
        const pipeline = project.pipelines.find((p) => p.id === Number(params.pipeline_id));
        if (!pipeline) return notFound("Pipeline");
        const jobs = project.jobs.filter((j) => j.pipelineId === pipeline.id && j.external === null);
        return { status: 200, body: jobs.map((j) => state.jobBody(project, j)) };
      },
    },
    {
      method: "GET",
      template: "/projects/{id}/jobs/{job_id}/trace",
      responses: { 200: "text", ...denied },
      handle: ({ project, params }) => {
        const job = project.jobs.find((j) => j.id === Number(params.job_id) && j.external === null);
        return job ? { status: 200, text: job.log } : notFound("Job");
      },
    },
    {
      method: "GET",
      template: `${COMMIT}/statuses`,
      query: z.strictObject({
        ref: z.string().optional(),
        stage: z.string().optional(),
        name: z.string().optional(),
        pipeline_id: int.optional(),
        order_by: z.enum(["id", "pipeline_id"]).optional(),
        sort: z.enum(["asc", "desc"]).optional(),
        all: bool.optional(),
        ...paging,
      }),
      responses: { 200: z.array(shapeOf(GITLAB_COMMIT_STATUS_EXAMPLE)), ...denied },
      handle: ({ project, params, query, state }) => {
        const pipelines = project.pipelines.filter(
          (p) =>
            p.sha === params.sha &&
            (!query.get("ref") || p.ref === query.get("ref")) &&
            (!query.get("pipeline_id") || String(p.id) === query.get("pipeline_id")),
        );
        let statuses = project.jobs
          .filter((j) => pipelines.some((p) => p.id === j.pipelineId))
          .filter((j) => !query.get("name") || j.name === query.get("name"))
          .sort((a, b) => b.id - a.id);
        if (query.get("all") !== "true") {
          statuses = statuses.filter((j, i) => statuses.findIndex((o) => o.name === j.name) === i);
        }
        statuses = statuses.slice(0, Number(query.get("per_page") ?? 20));
        return { status: 200, body: statuses.map((j) => state.statusBody(project, j)) };
      },
    },
    {
      method: "GET",
      template: `${COMMIT}/merge_requests`,
      query: z.strictObject(paging),
      responses: { 200: z.array(shapeOf(GITLAB_MERGE_REQUEST_EXAMPLE)), ...denied },
      handle: async ({ project, params, state }) => {
        const having = [];
        for (const mr of project.mrs) {
          const head = await state.headSha(project, mr);
          const contains = await state.git
            .git(project.path, ["merge-base", "--is-ancestor", params.sha ?? "", head])
            .then(
              () => true,
              () => false,
            );
          if (contains) having.push(mr);
        }
        return { status: 200, body: await Promise.all(having.map((m) => state.mrBody(project, m, false))) };
      },
    },
  ];
}
