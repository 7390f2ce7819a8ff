import { type Db, json } from "./connection.ts";
import { PAGE_LIMITS, resolvePageLimit } from "./page-limits.ts";

export interface ListEventsFilter {
  projectId?: string;
  taskId?: string;
  runId?: string;
  types?: readonly string[];
  /** Events with id greater than this (cursor / SSE Last-Event-ID). */
  after?: string | number | null;
  limit?: number;
}

export async function listEvents(db: Db, filter: ListEventsFilter = {}) {
  const limit = resolvePageLimit(filter.limit, PAGE_LIMITS.events);
  let q = db.selectFrom("events").selectAll().orderBy("id").limit(limit);
  if (filter.projectId) q = q.where("project_id", "=", filter.projectId);
  if (filter.taskId) q = q.where("task_id", "=", filter.taskId);
  if (filter.runId) q = q.where("run_id", "=", filter.runId);
  if (filter.types && filter.types.length > 0) q = q.where("type", "in", [...filter.types]);
  if (filter.after !== undefined && filter.after !== null) q = q.where("id", ">", String(filter.after));
  return q.execute();
}

/** Appends an event outside a transition (operator notes, worker notices). */
export async function appendEvent(
  db: Db,
  event: {
    projectId: string;
    type: string;
    taskId?: string | null;
    runId?: string | null;
    data?: Record<string, unknown>;
  },
): Promise<void> {
  await db
    .insertInto("events")
    .values({
      project_id: event.projectId,
      task_id: event.taskId ?? null,
      run_id: event.runId ?? null,
      type: event.type,
      data: json(event.data ?? {}),
    })
    .execute();
}
