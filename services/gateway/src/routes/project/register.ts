import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/** `/api/v1/projects…` (`definitions.ts`), each with its handler. */
export function registerProjectRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.listProjectsRoute), handlers.listProjects(ctx));
  app.openapi(guarded(ctx, routes.createProjectRoute), handlers.createProject(ctx));
  app.openapi(guarded(ctx, routes.getProjectRoute), handlers.getProject(ctx));
  app.openapi(guarded(ctx, routes.updateProjectRoute), handlers.updateProject(ctx));
  app.openapi(guarded(ctx, routes.pauseProjectRoute), handlers.setProjectStatus(ctx, "paused"));
  app.openapi(guarded(ctx, routes.resumeProjectRoute), handlers.setProjectStatus(ctx, "active"));
  app.openapi(guarded(ctx, routes.stopProjectRoute), handlers.setProjectStatus(ctx, "stopped"));
  app.openapi(guarded(ctx, routes.startMissionRoute), handlers.startMission(ctx));
  app.openapi(guarded(ctx, routes.listDecisionsRoute), handlers.listDecisions(ctx));
  app.openapi(guarded(ctx, routes.getDecisionRoute), handlers.getDecision(ctx));
  app.openapi(guarded(ctx, routes.listIncidentsRoute), handlers.listIncidents(ctx));
}
