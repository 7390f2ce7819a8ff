import type { Task, TaskKind } from "@overseer/domain";
import type { Db } from "./connection.ts";
import type { TaskRow } from "./database-schema.ts";
import { PAGE_LIMITS, resolvePageLimit } from "./page-limits.ts";
import { loadPullRequests } from "./pull-request-repository.ts";
import { taskFromRow } from "./row-mappers.ts";

export async function existingTaskIds(db: Db, projectId: string): Promise<string[]> {
  const rows = await db.selectFrom("tasks").select("id").where("project_id", "=", projectId).execute();
  return rows.map((r) => r.id);
}

export interface ListTasksFilter {
  status?: readonly string[];
  stage?: string;
  kind?: TaskKind;
  /** Opaque cursor: the `seq` of the last row of the previous page. */
  after?: string | null;
  limit?: number;
}

export async function listTasks(
  db: Db,
  projectId: string,
  filter: ListTasksFilter = {},
): Promise<{ tasks: Task[]; next: string | null }> {
  const limit = resolvePageLimit(filter.limit, PAGE_LIMITS.tasks);
  let q = db
    .selectFrom("tasks")
    .selectAll()
    .where("project_id", "=", projectId)
    .orderBy("seq")
    .limit(limit + 1);
  if (filter.status && filter.status.length > 0) q = q.where("status", "in", [...filter.status]);
  if (filter.stage) q = q.where("stage", "=", filter.stage);
  if (filter.kind) q = q.where("kind", "=", filter.kind);
  if (filter.after) q = q.where("seq", ">", filter.after);
  const rows = await q.execute();
  const page = rows.slice(0, limit);
  const ids = page.map((r) => r.id);
  const [prereqs, pullRequests] = await Promise.all([
    prerequisitesOf(db, projectId, ids),
    loadPullRequests(db, projectId, ids),
  ]);
  return {
    tasks: page.map((r) => taskFromRow(r, prereqs.get(r.id) ?? [], pullRequests.get(r.id) ?? null)),
    next: rows.length > limit ? (page.at(-1)?.seq ?? null) : null,
  };
}

export async function getTask(db: Db, projectId: string, taskId: string): Promise<Task | undefined> {
  const row = await db
    .selectFrom("tasks")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("id", "=", taskId)
    .executeTakeFirst();
  if (!row) return undefined;
  const [prereqs, pullRequests] = await Promise.all([
    prerequisitesOf(db, projectId, [taskId]),
    loadPullRequests(db, projectId, [taskId]),
  ]);
  return taskFromRow(row, prereqs.get(taskId) ?? [], pullRequests.get(taskId) ?? null);
}

async function prerequisitesOf(
  db: Db,
  projectId: string,
  taskIds: readonly string[],
): Promise<Map<string, string[]>> {
  const map = new Map<string, string[]>();
  if (taskIds.length === 0) return map;
  const rows = await db
    .selectFrom("task_dependencies")
    .select(["task_id", "depends_on"])
    .where("project_id", "=", projectId)
    .where("task_id", "in", [...taskIds])
    .execute();
  for (const r of rows) map.set(r.task_id, [...(map.get(r.task_id) ?? []), r.depends_on]);
  return map;
}

export async function countTasksByStatus(db: Db, projectId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom("tasks")
    .select(["status", (eb) => eb.fn.countAll<string>().as("n")])
    .where("project_id", "=", projectId)
    .groupBy("status")
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

export type { TaskRow };

/** Roles the project's tasks name (doctor checks a harness is configured for each). */
export async function distinctTaskRoles(db: Db, projectId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("tasks")
    .select("role")
    .distinct()
    .where("project_id", "=", projectId)
    .execute();
  return rows.map((r) => r.role);
}
