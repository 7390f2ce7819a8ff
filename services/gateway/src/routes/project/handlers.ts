import {
  getDecision as findDecision,
  loadMissionSummaryInput,
  listDecisions as queryDecisions,
  listIncidents as queryIncidents,
  listProjects as queryProjects,
} from "@overseer/db";
import { isDomainError, PROJECT_DEFAULTS, summarizeMission } from "@overseer/domain";
import { repoKindOf } from "@overseer/git";
import { parseRunnerConfig } from "@overseer/project-config";
import {
  createProject as applyCreate,
  startMission as applyMission,
  updateProjectConfig,
} from "@overseer/transitions";
import { actorOf } from "../../gateway-env.ts";
import { ApiError } from "../../http/api-error.ts";
import { redactedRunnerConfig } from "../../views/project-redaction.ts";
import { decisionCard, incidentView, projectView } from "../../views/resource-views.ts";
import { existingProject, type GatewayHandler, notFoundInProject, type RouteContext } from "../route-kit.ts";
import type {
  createProjectRoute,
  getDecisionRoute,
  getProjectRoute,
  listDecisionsRoute,
  listIncidentsRoute,
  listProjectsRoute,
  pauseProjectRoute,
  startMissionRoute,
  updateProjectRoute,
} from "./definitions.ts";

export function listProjects({ deps }: RouteContext): GatewayHandler<typeof listProjectsRoute> {
  return async (c) => {
    const { status } = c.req.valid("query");
    const rows = await queryProjects(deps.db, status ? { status } : {});
    return c.json({ projects: rows.map((r) => projectView(r)) }, 200);
  };
}

export function createProject(ctx: RouteContext): GatewayHandler<typeof createProjectRoute> {
  return async (c) => {
    const body = c.req.valid("json");
    const rawConfig = body.runner_config ?? {};
    const config = parseRunnerConfig(rawConfig, "runner_config");
    const branch = body.branch ?? PROJECT_DEFAULTS.branch;
    // A path the gateway cannot open (it may exist on the workers only) is landed on like a remote.
    const repoKind = await repoKindOf(body.repo, branch).catch(() => "remote" as const);
    try {
      const row = await applyCreate(
        ctx.transitions,
        {
          id: body.id,
          name: body.name,
          repo: body.repo,
          branch,
          repoKind,
          objective: body.objective,
          runnerConfig: rawConfig,
          concurrency: body.concurrency ?? config.concurrency,
          continuous: body.continuous,
          budgetUsd: body.budget_usd ?? config.budget_usd,
          status: body.status ?? "paused",
        },
        actorOf(c.get("token")),
      );
      return c.json(projectView(row, redactedRunnerConfig(row.runner_config)), 201);
    } catch (error) {
      if (isDomainError(error) && error.code === "already_exists") {
        throw new ApiError(409, "already_exists", `Project ${body.id} already exists; choose another id.`, {
          project_id: body.id,
        });
      }
      throw error;
    }
  };
}

export function getProject({ deps }: RouteContext): GatewayHandler<typeof getProjectRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const row = await existingProject(deps.db, id);
    const mission = await loadMissionSummaryInput(deps.db, row);
    return c.json(
      projectView(row, redactedRunnerConfig(row.runner_config), mission && summarizeMission(mission)),
      200,
    );
  };
}

export function updateProject(ctx: RouteContext): GatewayHandler<typeof updateProjectRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await existingProject(ctx.deps.db, id);
    const config = body.runner_config ? parseRunnerConfig(body.runner_config, "runner_config") : undefined;
    // An explicit budget wins; a new runner config brings its own budget_usd.
    const budgetUsd = body.budget_usd !== undefined ? body.budget_usd : config?.budget_usd;
    const row = await updateProjectConfig(
      ctx.transitions,
      id,
      {
        runnerConfig: body.runner_config,
        objective: body.objective,
        concurrency: body.concurrency ?? config?.concurrency,
        ...(budgetUsd !== undefined ? { budgetUsd } : {}),
      },
      actorOf(c.get("token")),
    );
    return c.json(projectView(row, redactedRunnerConfig(row.runner_config)), 200);
  };
}

/** Pause, resume and stop: `set-project-status <status>` (the three routes share one shape). */
export function setProjectStatus(
  ctx: RouteContext,
  status: "paused" | "active" | "stopped",
): GatewayHandler<typeof pauseProjectRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const { reason } = c.req.valid("json");
    const result = await ctx.transitions.apply(
      id,
      {
        kind: "set-project-status",
        status,
        by: actorOf(c.get("token")),
        reason: reason?.trim() || undefined,
      },
      { projectStatusIn: c.get("projectStatuses") },
    );
    const row = await existingProject(ctx.deps.db, id);
    return c.json({ project: projectView(row), application_status: result.outcome }, 200);
  };
}

export function startMission(ctx: RouteContext): GatewayHandler<typeof startMissionRoute> {
  const { db } = ctx.deps;
  return async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await existingProject(db, id);
    const result = await applyMission(ctx.transitions, id, {
      objective: body.objective.trim(),
      stage: body.stage ?? null,
      maxSessions: body.max_sessions ?? null,
      budgetUsd: body.budget_usd === undefined ? undefined : body.budget_usd,
      maxRounds: body.max_rounds,
      by: actorOf(c.get("token")),
      projectStatusIn: c.get("projectStatuses"),
    });
    const row = await existingProject(db, id);
    const mission = await loadMissionSummaryInput(db, row);
    return c.json(
      {
        project: projectView(row, undefined, mission && summarizeMission(mission)),
        application_status: result.outcome,
      },
      200,
    );
  };
}

export function listDecisions({ deps }: RouteContext): GatewayHandler<typeof listDecisionsRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const { status } = c.req.valid("query");
    await existingProject(deps.db, id);
    const decisions = await queryDecisions(deps.db, id, status);
    return c.json({ decisions: decisions.map(decisionCard) }, 200);
  };
}

export function getDecision({ deps }: RouteContext): GatewayHandler<typeof getDecisionRoute> {
  return async (c) => {
    const { id, decision_id } = c.req.valid("param");
    const decision = await findDecision(deps.db, id, decision_id);
    if (!decision) throw await notFoundInProject(deps.db, id, "Decision", decision_id);
    return c.json(decisionCard(decision), 200);
  };
}

export function listIncidents({ deps }: RouteContext): GatewayHandler<typeof listIncidentsRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const { limit } = c.req.valid("query");
    await existingProject(deps.db, id);
    const rows = await queryIncidents(deps.db, id, limit);
    return c.json({ incidents: rows.map(incidentView) }, 200);
  };
}
