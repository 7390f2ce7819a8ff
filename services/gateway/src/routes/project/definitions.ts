import { z } from "@hono/zod-openapi";
import {
  DecisionCardSchema,
  IncidentSchema,
  limitSchema,
  ProjectDecisionParams,
  ProjectListSchema,
  ProjectParams,
  ProjectSchema,
  ProjectStatusChangeSchema,
  projectIdSchema,
  stageSchema,
} from "@overseer/api-contract";
import { PROJECT_STATUSES } from "@overseer/domain";
import { findRepositoryLocationProblem } from "@overseer/project-config";
import {
  errorResponses,
  jsonBody,
  jsonResponse,
  READ_ERRORS,
  tableRoute,
  WRITE_ERRORS,
} from "../route-kit.ts";

/** `/api/v1/projects…`: list, create, get, change, pause/resume/stop, mission, decisions, incidents. */

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;

const ProjectCreateBody = z
  .strictObject({
    id: projectIdSchema,
    name: z
      .string()
      .min(1)
      .max(200)
      .regex(NO_CONTROL, { error: "a single-line name without control characters" })
      .optional(),
    repo: z
      .string({ error: "a repository path or URL git can fetch and push" })
      .min(1, { error: "a repository path or URL git can fetch and push" })
      .max(4096, { error: "at most 4096 characters" })
      .regex(NO_CONTROL, { error: "a repository path or URL without control characters" })
      .superRefine((repo, ctx) => {
        const problem = findRepositoryLocationProblem(repo);
        if (problem)
          ctx.addIssue({
            code: "custom",
            message: `a repository path or file/http(s)/ssh/git URL; this one ${problem}`,
          });
      })
      .openapi({ example: "/srv/git/demo.git" }),
    branch: z
      .string()
      .regex(/^(?!.*\.\.)(?!\/)(?!.*\/$)[A-Za-z0-9._/-]{1,200}$/, { error: "a branch name such as main" })
      .optional()
      .openapi({ example: "main" }),
    objective: z.string().max(100_000, { error: "at most 100000 characters" }).optional(),
    runner_config: z
      .record(z.string(), z.unknown(), { error: "an object (the runner config: argv, commands_by_role, …)" })
      .optional()
      .openapi({
        description: "Runner config (docs/runner-config.md), validated as the CLI validates it. Default {}.",
      }),
    concurrency: z
      .int({ error: "an integer from 1 to 64" })
      .min(1, { error: "an integer from 1 to 64" })
      .max(64, { error: "an integer from 1 to 64" })
      .optional(),
    continuous: z.boolean({ error: "true or false" }).optional(),
    budget_usd: z
      .number({ error: "a number of dollars >= 0, or null" })
      .min(0, { error: "a number of dollars >= 0, or null" })
      .nullable()
      .optional(),
    status: z
      .enum(["active", "paused"], { error: "active or paused" })
      .optional()
      .openapi({ description: "Default paused: start it when ready." }),
  })
  .openapi("ProjectCreateRequest");

const ProjectUpdateBody = ProjectCreateBody.pick({
  objective: true,
  runner_config: true,
  concurrency: true,
  budget_usd: true,
}).openapi("ProjectUpdateRequest");

const ReasonBody = z
  .strictObject({ reason: z.string().max(2000, { error: "at most 2000 characters" }).optional() })
  .openapi("ReasonRequest");

const MissionStartBody = z
  .strictObject({
    objective: z
      .string()
      .max(20000, { error: "at most 20000 characters" })
      .refine((t) => t.trim() !== "", { error: "a non-empty objective" }),
    stage: stageSchema.nullish(),
    max_sessions: z.number().int().positive().max(1_000_000).nullish(),
    budget_usd: z.number().positive().max(1_000_000).nullish(),
    max_rounds: z.number().int().positive().max(1000).optional(),
  })
  .openapi("MissionStartRequest");

const ProjectListQuery = z.object({
  status: z.enum(PROJECT_STATUSES, { error: `one of ${PROJECT_STATUSES.join(", ")}` }).optional(),
});

export const listProjectsRoute = tableRoute("listProjects", {
  method: "get",
  path: "/api/v1/projects",
  tags: ["Projects"],
  summary: "List projects",
  request: { query: ProjectListQuery },
  responses: {
    200: jsonResponse(ProjectListSchema, "Projects, by id."),
    ...errorResponses(400, 401, 403),
  },
});

export const createProjectRoute = tableRoute("createProject", {
  method: "post",
  path: "/api/v1/projects",
  tags: ["Projects"],
  summary: "Create a project",
  description:
    "The runner config is validated (422 lists every problem) and answered with secret values redacted. A local repository with a working tree is recorded as `working_copy`: its work lands on `overseer/<branch>` (`landing_branch`), never on the checked-out branch.",
  request: { body: jsonBody(ProjectCreateBody) },
  responses: { 201: jsonResponse(ProjectSchema, "Created."), ...errorResponses(...WRITE_ERRORS) },
});

export const getProjectRoute = tableRoute("getProject", {
  method: "get",
  path: "/api/v1/projects/{id}",
  tags: ["Projects"],
  summary: "Get a project (runner config redacted)",
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(ProjectSchema, "The project."), ...errorResponses(...READ_ERRORS) },
});

export const updateProjectRoute = tableRoute("updateProject", {
  method: "patch",
  path: "/api/v1/projects/{id}",
  tags: ["Projects"],
  summary: "Change a project's settings (runner config, objective, concurrency, budget)",
  description:
    "Applies `update-project-config` (event `project.config_updated` naming the changed keys); absent keys keep their value. A runner config is validated like on create (422 lists every problem) and replaces the stored one; the answer redacts secret values.",
  request: { params: ProjectParams, body: jsonBody(ProjectUpdateBody) },
  responses: {
    200: jsonResponse(ProjectSchema, "The changed project."),
    ...errorResponses(...WRITE_ERRORS),
  },
});

/** `POST /api/v1/projects/{id}/<verb>`: applies `set-project-status <status>`. */
function statusChangeRoute<
  const Id extends "pauseProject" | "resumeProject" | "stopProject",
  const V extends string,
>(operationId: Id, verb: V, status: "paused" | "active" | "stopped", summary: string) {
  return tableRoute(operationId, {
    method: "post",
    path: `/api/v1/projects/{id}/${verb}`,
    tags: ["Projects"],
    summary,
    description: `Applies \`set-project-status ${status}\` as a transition (recorded in events).`,
    request: {
      params: ProjectParams,
      body: jsonBody(ReasonBody, false),
    },
    responses: {
      200: jsonResponse(ProjectStatusChangeSchema, "New project state."),
      ...errorResponses(...WRITE_ERRORS),
    },
  });
}

export const pauseProjectRoute = statusChangeRoute(
  "pauseProject",
  "pause",
  "paused",
  "Pause scheduling (running runs finish)",
);
export const resumeProjectRoute = statusChangeRoute(
  "resumeProject",
  "resume",
  "active",
  "Resume scheduling (session budget restarts)",
);
export const stopProjectRoute = statusChangeRoute(
  "stopProject",
  "stop",
  "stopped",
  "Stop the project (active runs are cancelled)",
);

export const startMissionRoute = tableRoute("startMission", {
  method: "post",
  path: "/api/v1/projects/{id}/mission",
  tags: ["Projects"],
  summary: "Start a mission",
  description:
    "Applies `start-mission`: the project becomes active and continuous with a fresh session budget and a planning task for the objective; plans are reviewed, imported as one whole, and continued until an independent reviewer approves completion or a bound (max_sessions, budget_usd, max_rounds) pauses it.",
  request: {
    params: ProjectParams,
    body: jsonBody(MissionStartBody),
  },
  responses: {
    200: jsonResponse(ProjectStatusChangeSchema, "The project with its mission."),
    ...errorResponses(...WRITE_ERRORS),
  },
});

export const listDecisionsRoute = tableRoute("listDecisions", {
  method: "get",
  path: "/api/v1/projects/{id}/decisions",
  tags: ["Decisions"],
  summary: "List decision cards",
  request: {
    params: ProjectParams,
    query: z.object({
      status: z.enum(["pending", "resolved"], { error: "pending or resolved" }).optional(),
    }),
  },
  responses: {
    200: jsonResponse(z.object({ decisions: z.array(DecisionCardSchema) }), "Cards, oldest first."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const getDecisionRoute = tableRoute("getDecision", {
  method: "get",
  path: "/api/v1/projects/{id}/decisions/{decision_id}",
  tags: ["Decisions"],
  summary: "Get a decision card",
  request: { params: ProjectDecisionParams },
  responses: { 200: jsonResponse(DecisionCardSchema, "The card."), ...errorResponses(...READ_ERRORS) },
});

export const listIncidentsRoute = tableRoute("listIncidents", {
  method: "get",
  path: "/api/v1/projects/{id}/incidents",
  tags: ["Projects"],
  summary: "List incidents (newest first)",
  description: "Scope violations, timeouts, stalls, harness not configured, harness crashes.",
  request: { params: ProjectParams, query: z.object({ limit: limitSchema(1000, 100) }) },
  responses: {
    200: jsonResponse(z.object({ incidents: z.array(IncidentSchema) }), "Incidents."),
    ...errorResponses(...READ_ERRORS),
  },
});
