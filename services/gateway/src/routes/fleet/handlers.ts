import { scopeGrants } from "@overseer/api-contract";
import {
  getRun,
  listPendingDecisionsAcrossProjects,
  listRecentIncidents,
  requireProject,
  runStats,
} from "@overseer/db";
import { startProject as applyStart } from "@overseer/transitions";
import { actorOf } from "../../gateway-env.ts";
import { ApiError } from "../../http/api-error.ts";
import { sendEncoded } from "../../http/encoded-body.ts";
import type { CommitDiffReader } from "../../operations/commit-diff-reader.ts";
import { runStatsView } from "../../views/fleet-view.ts";
import { decisionCard, incidentView, projectView } from "../../views/resource-views.ts";
import { existingProject, type GatewayHandler, type RouteContext, runNotFound } from "../route-kit.ts";
import type {
  getFleetRoute,
  getRunDiffRoute,
  getRunStatsRoute,
  getSessionRoute,
  listFleetDecisionsRoute,
  listFleetIncidentsRoute,
  startProjectRoute,
} from "./definitions.ts";

export const getSession: GatewayHandler<typeof getSessionRoute> = (c) => {
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
};

export function getFleet(ctx: RouteContext): GatewayHandler<typeof getFleetRoute> {
  return async (c) =>
    // One serialized answer shared by every poller, compressed once per change (gateway-app.ts,
    // live/fleet-answer.ts, http/encoded-body.ts).
    sendEncoded(c, await ctx.fleetCache.get(), "application/json", ctx.options.compressMinBytes) as never;
}

export function listFleetDecisions({ deps }: RouteContext): GatewayHandler<typeof listFleetDecisionsRoute> {
  return async (c) => {
    const { limit } = c.req.valid("query");
    const rows = await listPendingDecisionsAcrossProjects(deps.db, limit);
    return c.json({ decisions: rows.map((d) => ({ ...decisionCard(d), project_id: d.projectId })) }, 200);
  };
}

export function listFleetIncidents({ deps }: RouteContext): GatewayHandler<typeof listFleetIncidentsRoute> {
  return async (c) => {
    const { limit } = c.req.valid("query");
    const rows = await listRecentIncidents(deps.db, limit);
    return c.json({ incidents: rows.map(incidentView) }, 200);
  };
}

export function getRunStats({ deps }: RouteContext): GatewayHandler<typeof getRunStatsRoute> {
  return async (c) => {
    const q = c.req.valid("query");
    const since = new Date(Date.now() - q.minutes * 60_000);
    const stats = await runStats(deps.db, {
      since,
      bucketSeconds: q.bucket_seconds,
      ...(q.project ? { projectId: q.project } : {}),
    });
    return c.json(runStatsView(stats, since, q.bucket_seconds), 200);
  };
}

export function startProject(ctx: RouteContext): GatewayHandler<typeof startProjectRoute> {
  const { db, logger } = ctx.deps;
  return async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json") ?? {};
    await existingProject(db, id);
    await applyStart(ctx.transitions, id, {
      stage: body.stage ?? null,
      maxSessions: body.max_sessions ?? null,
      continuous: body.continuous,
      by: actorOf(c.get("token")),
      projectStatusIn: c.get("projectStatuses"),
    });
    const row = await requireProject(db, id);
    logger.info(
      { projectId: id, stage: row.stage, maxSessions: row.sessions_limit, by: c.get("token")?.name },
      "project started",
    );
    return c.json({ project: projectView(row) }, 200);
  };
}

/** The diff of a run's commit, read through `diffs` (the gateway's own mirrors). */
export function getRunDiff(
  { deps }: RouteContext,
  diffs: CommitDiffReader,
): GatewayHandler<typeof getRunDiffRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const run = await getRun(deps.db, id);
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
    const project = await existingProject(deps.db, run.project_id);
    const diff = await diffs.read(project.id, project.repo, run.commit_sha);
    return c.json({ run_id: id, commit_sha: run.commit_sha, ...diff }, 200);
  };
}
