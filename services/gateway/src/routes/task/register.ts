import { guarded, type RouteApp, type RouteContext } from "../route-kit.ts";
import * as routes from "./definitions.ts";
import * as handlers from "./handlers.ts";

/** `/api/v1/projects/{id}/tasks…` (`definitions.ts`), each with its handler. */
export function registerTaskRoutes(app: RouteApp, ctx: RouteContext): void {
  app.openapi(guarded(ctx, routes.listTasksRoute), handlers.listTasks(ctx));
  app.openapi(guarded(ctx, routes.getTaskRoute), handlers.getTask(ctx));
  app.openapi(guarded(ctx, routes.createTaskRoute), handlers.createTask(ctx));
  app.openapi(guarded(ctx, routes.importTasksRoute), handlers.importTasks(ctx));
  app.openapi(guarded(ctx, routes.cancelTaskRoute), handlers.cancelTask(ctx));
  app.openapi(guarded(ctx, routes.releaseExternalTaskRoute), handlers.releaseExternalTask(ctx));
}
