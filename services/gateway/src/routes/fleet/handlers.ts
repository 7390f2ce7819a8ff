import { scopeGrants } from "@overseer/api-contract";
import {
  type Db,
  getRun,
  listFleet,
  listPendingDecisionsAcrossProjects,
  listRecentIncidents,
  requireProject,
  runStats,
  runThroughput,
} from "@overseer/db";
import { startProject as applyStart } from "@overseer/transitions";
import { actorOf } from "../../gateway-env.ts";
import { ApiError } from "../../http/api-error.ts";
import type { CommitDiffReader } from "../../operations/commit-diff-reader.ts";
import { fleetView, runStatsView, type ThroughputWindow } from "../../views/fleet-view.ts";
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

/** Fleet throughput: runs ended per 5 minutes over the last hour. */
const FLEET_THROUGHPUT: ThroughputWindow = { windowSeconds: 3600, bucketSeconds: 300 };

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

/**
 * The fleet overview serialized, read from Postgres: what `RouteContext.fleetCache` shares.
 *
 * It costs O(projects) to read, build and serialize (~15 ms of CPU and 400 kB at 1,000
 * projects); answered per request, ten dashboards polling once a second took the whole event
 * loop, and every other route (status included) queued behind them. So every request shares one
 * answer for `fleetCacheMs` (concurrent requests join the read in flight), and for
 * `fleetStaleMs` more it is still answered at once while one refresh runs behind it: under
 * steady polling no request waits for this read (at 1,000 running projects, the one request a
 * second that did set the fleet's p99).
 *
 * Other processes' changes (NOTIFYs) do not drop the answer: during a burst of transitions they
 * arrive by the hundred a second, and dropping on each would put the cost back on every request.
 * They show within `fleetCacheMs + fleetStaleMs`. Transitions applied through this gateway drop
 * it, so an operator sees their own writes at once; a read that began before such a drop is
 * never reused.
 */
export async function loadFleetAnswer(db: Db): Promise<string> {
  const { windowSeconds, bucketSeconds } = FLEET_THROUGHPUT;
  const [rows, throughput] = await Promise.all([
    listFleet(db),
    runThroughput(db, windowSeconds, bucketSeconds),
  ]);
  return JSON.stringify(fleetView(rows, throughput, FLEET_THROUGHPUT, new Date()));
}

export function getFleet(ctx: RouteContext): GatewayHandler<typeof getFleetRoute> {
  return async (c) =>
    // One serialized answer shared by every poller (loadFleetAnswer).
    c.body(await ctx.fleetCache.get(), 200, { "Content-Type": "application/json" }) as never;
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
