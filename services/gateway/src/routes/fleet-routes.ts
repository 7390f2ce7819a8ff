import { createRoute, z } from "@hono/zod-openapi";
import {
  CommitDiffSchema,
  FleetSchema,
  IncidentSchema,
  integerQuerySchema,
  limitSchema,
  PendingDecisionSchema,
  ProjectParams,
  ProjectStartedSchema,
  projectIdSchema,
  RunParams,
  RunStatsSchema,
  SessionSchema,
  scopeGrants,
  stageSchema,
} from "@overseer/api-contract";
import {
  getRun,
  listFleet,
  listPendingDecisionsAcrossProjects,
  listRecentIncidents,
  requireProject,
  runStats,
  runThroughput,
} from "@overseer/db";
import { startProject } from "@overseer/transitions";
import { actorOf } from "../gateway-env.ts";
import { ApiError } from "../http/api-error.ts";
import { CommitDiffReader } from "../operations/commit-diff-reader.ts";
import { decisionCard, incidentView, projectView } from "../views/resource-views.ts";
import {
  errorResponses,
  existingProject,
  jsonBody,
  jsonResponse,
  READ_ERRORS,
  type RouteApp,
  type RouteContext,
  runNotFound,
  tableRoute,
  WRITE_ERRORS,
} from "./route-kit.ts";

/** Fleet throughput: runs ended per 5 minutes over the last hour. */
const THROUGHPUT_WINDOW_SECONDS = 3600;
const THROUGHPUT_BUCKET_SECONDS = 300;
/** Largest commit patch the diff route returns. */
const MAX_PATCH_BYTES = 512 * 1024;

const StartBody = z.strictObject({
  stage: stageSchema.nullable().optional(),
  continuous: z
    .boolean({ error: "true or false (keep the project active when its work is done)" })
    .optional(),
  max_sessions: z
    .number({ error: "an integer from 1 to 100000 (new agent processes for this start)" })
    .int({ error: "an integer from 1 to 100000" })
    .min(1, { error: "an integer from 1 to 100000" })
    .max(100_000, { error: "an integer from 1 to 100000" })
    .nullable()
    .optional(),
});

const StatsQuery = z.object({
  minutes: integerQuerySchema(5, 10_080, 60, "History to cover, in minutes (default 60)."),
  bucket_seconds: integerQuerySchema(10, 86_400, 60, "Bucket width in seconds (default 60)."),
  project: projectIdSchema.optional().openapi({ description: "Only this project's runs." }),
});

/**
 * Read models and controls of the operator web app: the caller's session, the fleet overview
 * (200 projects in three grouped queries), every pending card, run statistics for charts, the
 * start control with a session budget, and a run's commit diff.
 */
export function registerFleetRoutes(app: RouteApp, ctx: RouteContext): void {
  const { db } = ctx.deps;
  const diffs = new CommitDiffReader(ctx.options.dataDir, MAX_PATCH_BYTES);

  app.openapi(
    createRoute(
      tableRoute(ctx, "getSession", {
        method: "get",
        path: "/api/v1/session",
        tags: ["Operations"],
        summary: "The caller's token name and scope",
        responses: {
          200: jsonResponse(SessionSchema, "Who is calling and what the token allows."),
          ...errorResponses(401, 403),
        },
      }),
    ),
    (c) => {
      const token = c.get("token");
      if (!token) throw new ApiError(401, "unauthorized", "This route needs a bearer token.");
      return c.json(
        {
          token_name: token.name,
          scope: token.scope,
          can_operate: scopeGrants(token.scope, "operate"),
          can_admin: scopeGrants(token.scope, "admin"),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute(
      tableRoute(ctx, "getFleet", {
        method: "get",
        path: "/api/v1/fleet",
        tags: ["Projects"],
        summary: "Every project with task counts, active runs, pending cards, spend and throughput",
        responses: {
          200: jsonResponse(FleetSchema, "Projects ordered by id."),
          ...errorResponses(401, 403),
        },
      }),
    ),
    async (c) => {
      const [rows, throughput] = await Promise.all([
        listFleet(db),
        runThroughput(db, THROUGHPUT_WINDOW_SECONDS, THROUGHPUT_BUCKET_SECONDS),
      ]);
      const buckets = THROUGHPUT_WINDOW_SECONDS / THROUGHPUT_BUCKET_SECONDS;
      const series = new Map<string, number[]>();
      for (const t of throughput) {
        if (t.bucket < 0 || t.bucket >= buckets) continue;
        let s = series.get(t.project_id);
        if (!s) {
          s = new Array<number>(buckets).fill(0);
          series.set(t.project_id, s);
        }
        s[buckets - 1 - t.bucket] = t.runs;
      }
      const empty = new Array<number>(buckets).fill(0);
      const projects = rows.map((r) => {
        const counts: Record<string, number> = { ...r.counts };
        counts.total = Object.values(r.counts).reduce((a, b) => a + b, 0);
        return {
          id: r.id,
          name: r.name,
          status: r.status as "active" | "paused" | "stopped",
          status_reason: r.status_reason,
          stage: r.stage,
          objective: r.objective,
          counts,
          running: r.running,
          pending_decisions: r.pending,
          sessions: { used: r.sessions_used, limit: r.sessions_limit },
          budget_usd: r.budget_usd,
          cost_usd: Number(r.cost_usd),
          tokens_in: Number(r.tokens_in),
          tokens_out: Number(r.tokens_out),
          throughput: series.get(r.id) ?? empty,
          updated_at: new Date(r.updated_at).toISOString(),
        };
      });
      return c.json(
        {
          projects,
          window_seconds: THROUGHPUT_WINDOW_SECONDS,
          bucket_seconds: THROUGHPUT_BUCKET_SECONDS,
          generated_at: new Date().toISOString(),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute(
      tableRoute(ctx, "listFleetDecisions", {
        method: "get",
        path: "/api/v1/decisions",
        tags: ["Decisions"],
        summary: "Every pending decision card across projects (oldest first)",
        request: { query: z.object({ limit: limitSchema(1000, 500) }) },
        responses: {
          200: jsonResponse(z.object({ decisions: z.array(PendingDecisionSchema) }), "Pending cards."),
          ...errorResponses(...READ_ERRORS),
        },
      }),
    ),
    async (c) => {
      const { limit } = c.req.valid("query");
      const rows = await listPendingDecisionsAcrossProjects(db, limit);
      return c.json({ decisions: rows.map((d) => ({ ...decisionCard(d), project_id: d.projectId })) }, 200);
    },
  );

  app.openapi(
    createRoute(
      tableRoute(ctx, "listFleetIncidents", {
        method: "get",
        path: "/api/v1/incidents",
        tags: ["Projects"],
        summary: "The newest incidents of every project (newest first)",
        request: { query: z.object({ limit: limitSchema(1000, 200) }) },
        responses: {
          200: jsonResponse(z.object({ incidents: z.array(IncidentSchema) }), "Incidents."),
          ...errorResponses(...READ_ERRORS),
        },
      }),
    ),
    async (c) => {
      const { limit } = c.req.valid("query");
      const rows = await listRecentIncidents(db, limit);
      return c.json({ incidents: rows.map(incidentView) }, 200);
    },
  );

  app.openapi(
    createRoute(
      tableRoute(ctx, "getRunStats", {
        method: "get",
        path: "/api/v1/stats/runs",
        tags: ["Runs"],
        summary: "Ended runs per time bucket: count, failures, duration percentiles, cost per project",
        request: { query: StatsQuery },
        responses: {
          200: jsonResponse(RunStatsSchema, "Buckets oldest first."),
          ...errorResponses(...READ_ERRORS),
        },
      }),
    ),
    async (c) => {
      const q = c.req.valid("query");
      const since = new Date(Date.now() - q.minutes * 60_000);
      const stats = await runStats(db, {
        since,
        bucketSeconds: q.bucket_seconds,
        ...(q.project ? { projectId: q.project } : {}),
      });
      const num = (v: number | string | null) => (v === null ? null : Number(v));
      return c.json(
        {
          since: since.toISOString(),
          bucket_seconds: q.bucket_seconds,
          buckets: stats.buckets.map((b) => ({
            at: new Date(b.at).toISOString(),
            runs: b.runs,
            failed: b.failed,
            p50_ms: num(b.p50_ms),
            p90_ms: num(b.p90_ms),
            p99_ms: num(b.p99_ms),
          })),
          cost: stats.cost.map((b) => ({
            at: new Date(b.at).toISOString(),
            project_id: b.project_id,
            cost_usd: Number(b.cost_usd),
          })),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute(
      tableRoute(ctx, "startProject", {
        method: "post",
        path: "/api/v1/projects/{id}/start",
        tags: ["Projects"],
        summary: "Start the project (optionally one stage) with a fresh session budget",
        description:
          "Makes the project active, restarts its session counter and sets the budget of new agent processes for this start (`max_sessions`, default the runner config's).",
        request: {
          params: ProjectParams,
          body: jsonBody(StartBody, false),
        },
        responses: {
          200: jsonResponse(ProjectStartedSchema, "The started project."),
          ...errorResponses(...WRITE_ERRORS),
        },
      }),
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const body = c.req.valid("json") ?? {};
      await existingProject(db, id);
      await startProject(ctx.transitions, id, {
        stage: body.stage ?? null,
        maxSessions: body.max_sessions ?? null,
        continuous: body.continuous,
        by: actorOf(c.get("token")),
        projectStatusIn: c.get("projectStatuses"),
      });
      const row = await requireProject(db, id);
      ctx.deps.logger.info(
        { projectId: id, stage: row.stage, maxSessions: row.sessions_limit, by: c.get("token")?.name },
        "project started",
      );
      return c.json({ project: projectView(row) }, 200);
    },
  );

  app.openapi(
    createRoute(
      tableRoute(ctx, "getRunDiff", {
        method: "get",
        path: "/api/v1/runs/{id}/diff",
        tags: ["Runs"],
        summary: "The diff of the commit a run made",
        description:
          "Read from the gateway's own mirror of the project repository; `available: false` with a reason when the run made no commit or the commit cannot be read.",
        request: { params: RunParams },
        responses: {
          200: jsonResponse(CommitDiffSchema, "The commit's message, changed files and patch."),
          ...errorResponses(...READ_ERRORS),
        },
      }),
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const run = await getRun(db, id);
      if (!run) throw runNotFound(id);
      if (!run.commit_sha) {
        return c.json(
          {
            run_id: id,
            commit_sha: "",
            available: false,
            reason: "this run made no commit",
            message: "",
            files: [],
            patch: "",
            truncated: false,
          },
          200,
        );
      }
      const project = await existingProject(db, run.project_id);
      const diff = await diffs.read(project.id, project.repo, run.commit_sha);
      return c.json({ run_id: id, commit_sha: run.commit_sha, ...diff }, 200);
    },
  );
}
