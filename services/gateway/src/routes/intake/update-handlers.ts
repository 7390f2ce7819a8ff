import type { TrackerUpdate } from "@overseer/api-contract";
import {
  getTrackerUpdate,
  listTrackerUpdatePage,
  redeliverTrackerUpdate as redeliverTrackerUpdateRow,
  type TrackerUpdateListRow,
} from "@overseer/db";
import { ApiError } from "../../http/api-error.ts";
import { iso, isoOrNull } from "../../views/resource-views.ts";
import { type GatewayHandler, newestFirstPage, type RouteContext } from "../route-kit.ts";
import type { listTrackerUpdatesRoute, redeliverTrackerUpdateRoute } from "./definitions.ts";

export function trackerUpdateView(row: TrackerUpdateListRow): TrackerUpdate {
  return {
    id: String(row.id),
    key: row.key,
    project_id: row.project_id,
    task_id: row.task_id,
    source_id: row.source_id,
    kind: row.kind as TrackerUpdate["kind"],
    issue_id: row.issue_id,
    moment: row.moment,
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    last_attempt_at: isoOrNull(row.last_attempt_at),
    delivered_at: isoOrNull(row.delivered_at),
    created_at: iso(row.created_at),
  };
}

export function listTrackerUpdates({ deps }: RouteContext): GatewayHandler<typeof listTrackerUpdatesRoute> {
  return async (c) => {
    const q = c.req.valid("query");
    const rows = await listTrackerUpdatePage(deps.db, {
      projectId: q.project_id,
      sourceId: q.source_id,
      status: q.status,
      before: q.before,
      limit: q.limit + 1,
    });
    const { page, nextBefore } = newestFirstPage(rows, q.limit);
    return c.json({ updates: page.map(trackerUpdateView), next_before: nextBefore }, 200);
  };
}

export function redeliverTrackerUpdate({
  deps,
}: RouteContext): GatewayHandler<typeof redeliverTrackerUpdateRoute> {
  return async (c) => {
    const { update_id } = c.req.valid("param");
    const redelivered = await redeliverTrackerUpdateRow(deps.db, update_id);
    const row = await getTrackerUpdate(deps.db, update_id);
    if (!row)
      throw new ApiError(
        404,
        "not_found",
        `Tracker update ${update_id} does not exist; list them with GET /api/v1/intake/updates (overseer intake updates).`,
        { update_id },
      );
    return c.json({ update: trackerUpdateView(row), redelivered }, 200);
  };
}
