/**
 * The figures a forge loop case prints for the closing note, one place for every forge: the
 * forge API calls Postgres counted for the task, the time from its checks passing to its merge,
 * and the double's API requests by route.
 */
import { type Db, listEvents } from "@overseer/db";
import type { ApiRequest } from "@overseer/test-support";

/** The double's `/api/` requests counted by route; `routeOf` names a request's route from its path. */
export function requestsByRoute(
  requests: readonly ApiRequest[],
  routeOf: (path: string) => string,
): Record<string, number> {
  const byRoute: Record<string, number> = {};
  for (const r of requests) {
    if (!r.path.startsWith("/api/")) continue;
    const route = `${r.method} ${routeOf(r.path)}`;
    byRoute[route] = (byRoute[route] ?? 0) + 1;
  }
  return byRoute;
}

/**
 * Prints the figures of task `taskId`'s loop of three rounds, after `labels` (the figure's name,
 * the forge), with `byRoute` when given; returns its pull request's row.
 */
export async function printLoopFigures(
  db: Db,
  project: string,
  labels: { figure: string; forge?: string },
  byRoute?: Record<string, number>,
  taskId = "T-1",
): Promise<{ api_calls: number }> {
  const row = await db
    .selectFrom("pull_requests")
    .select(["api_calls"])
    .where("project_id", "=", project)
    .where("task_id", "=", taskId)
    .executeTakeFirstOrThrow();
  const events = await listEvents(db, {
    projectId: project,
    taskId,
    types: ["pr.checks_passed", "pr.merged"],
    limit: 1000,
  });
  const last = (type: string) => events.filter((e) => e.type === type).at(-1)?.created_at;
  const passedAt = last("pr.checks_passed");
  const mergedAt = last("pr.merged");
  const greenToMergedMs =
    passedAt && mergedAt ? new Date(mergedAt).getTime() - new Date(passedAt).getTime() : null;
  console.log(
    JSON.stringify({ ...labels, forgeApiCallsForTask: row.api_calls, greenToMergedMs, rounds: 3, byRoute }),
  );
  return row;
}
