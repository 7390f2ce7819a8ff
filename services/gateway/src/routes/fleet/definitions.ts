import { z } from "@hono/zod-openapi";
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
  stageSchema,
} from "@overseer/api-contract";
import {
  errorResponses,
  jsonBody,
  jsonResponse,
  READ_ERRORS,
  tableRoute,
  WRITE_ERRORS,
} from "../route-kit.ts";

/**
 * Read models and controls of the operator web app: the caller's session, the fleet overview
 * (200 projects in three grouped queries), every pending card, run statistics for charts, the
 * start control with a session budget, and a run's commit diff.
 */

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

export const getSessionRoute = tableRoute("getSession", {
  method: "get",
  path: "/api/v1/session",
  tags: ["Operations"],
  summary: "The caller's token name and scope",
  responses: {
    200: jsonResponse(SessionSchema, "Who is calling and what the token allows."),
    ...errorResponses(401, 403),
  },
});

export const getFleetRoute = tableRoute("getFleet", {
  method: "get",
  path: "/api/v1/fleet",
  tags: ["Projects"],
  summary: "Every project with task counts, active runs, pending cards, spend and throughput",
  responses: {
    200: jsonResponse(FleetSchema, "Projects ordered by id."),
    ...errorResponses(401, 403),
  },
});

export const listFleetDecisionsRoute = tableRoute("listFleetDecisions", {
  method: "get",
  path: "/api/v1/decisions",
  tags: ["Decisions"],
  summary: "Every pending decision card across projects (oldest first)",
  request: { query: z.object({ limit: limitSchema(1000, 500) }) },
  responses: {
    200: jsonResponse(z.object({ decisions: z.array(PendingDecisionSchema) }), "Pending cards."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const listFleetIncidentsRoute = tableRoute("listFleetIncidents", {
  method: "get",
  path: "/api/v1/incidents",
  tags: ["Projects"],
  summary: "The newest incidents of every project (newest first)",
  request: { query: z.object({ limit: limitSchema(1000, 200) }) },
  responses: {
    200: jsonResponse(z.object({ incidents: z.array(IncidentSchema) }), "Incidents."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const getRunStatsRoute = tableRoute("getRunStats", {
  method: "get",
  path: "/api/v1/stats/runs",
  tags: ["Runs"],
  summary: "Ended runs per time bucket: count, failures, duration percentiles, cost per project",
  request: { query: StatsQuery },
  responses: {
    200: jsonResponse(RunStatsSchema, "Buckets oldest first."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const startProjectRoute = tableRoute("startProject", {
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
});

export const getRunDiffRoute = tableRoute("getRunDiff", {
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
});
