import type { Task } from "@overseer/domain";
import { sql } from "kysely";
import { type Db, json } from "./connection.ts";
import type { TaskRow } from "./database-schema.ts";
import { ConflictError, isUniqueViolation } from "./db-errors.ts";
import { taskFromRow } from "./row-mappers.ts";

export interface TaskCardInput {
  id: string;
  stage: string;
  title: string;
  body: string;
  role: string;
  scope: readonly string[];
  prerequisites: readonly string[];
  acceptance: readonly string[];
  priority: number;
}

/**
 * Inserts a validated task graph in one transaction: all cards or none, in batched multi-row
 * inserts (any number of cards). Validation (ids,
 * cycles, globs) belongs to the caller (`@overseer/config` task files); this enforces only
 * what the database can: unknown prerequisites and duplicate ids abort the whole import.
 */
export async function importTasks(
  db: Db,
  projectId: string,
  cards: readonly TaskCardInput[],
): Promise<number> {
  if (cards.length === 0) return 0;
  try {
    await db.transaction().execute(async (trx) => {
      const rows = cards.map((c) => ({
        project_id: projectId,
        id: c.id,
        stage: c.stage,
        title: c.title,
        body: c.body,
        role: c.role,
        scope: [...c.scope],
        acceptance: [...c.acceptance],
        priority: c.priority,
        kind: "work" as const,
        parent_id: null,
        root_id: null,
        status_reason: null,
        awaiting_reason: null,
        blocked_by: null,
        return_to: null,
        feedback: null,
        executor_agent_id: null,
        branch_head: null,
        answers: json([]),
      }));
      for (const batch of batches(rows)) await trx.insertInto("tasks").values(batch).execute();
      const deps = cards.flatMap((c) =>
        c.prerequisites.map((p) => ({ project_id: projectId, task_id: c.id, depends_on: p })),
      );
      for (const batch of batches(deps)) await trx.insertInto("task_dependencies").values(batch).execute();
      await sql`SELECT pg_notify('overseer_events', ${projectId})`.execute(trx);
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw new ConflictError("A task with one of these ids already exists; nothing was imported.");
    if ((error as { code?: string }).code === "23503") {
      throw new ConflictError("A prerequisite names a task that does not exist; nothing was imported.");
    }
    throw error;
  }
  return cards.length;
}

/**
 * Bind parameters one statement may use (Postgres allows 65535); multi-row inserts are split
 * so that no statement goes beyond it, whatever the number of rows.
 */
const MAX_BIND_PARAMETERS = 60_000;

/** `rows` in chunks whose column count times row count stays within `MAX_BIND_PARAMETERS`. */
function* batches<T extends object>(rows: readonly T[]): Generator<T[]> {
  const columns = rows[0] ? Object.keys(rows[0]).length : 1;
  const size = Math.max(1, Math.floor(MAX_BIND_PARAMETERS / columns));
  for (let start = 0; start < rows.length; start += size) yield rows.slice(start, start + size);
}

export async function existingTaskIds(db: Db, projectId: string): Promise<string[]> {
  const rows = await db.selectFrom("tasks").select("id").where("project_id", "=", projectId).execute();
  return rows.map((r) => r.id);
}

export interface ListTasksFilter {
  status?: readonly string[];
  stage?: string;
  kind?: "work" | "resolver";
  /** Opaque cursor: the `seq` of the last row of the previous page. */
  after?: string | null;
  limit?: number;
}

export async function listTasks(
  db: Db,
  projectId: string,
  filter: ListTasksFilter = {},
): Promise<{ tasks: Task[]; next: string | null }> {
  const limit = Math.min(Math.max(filter.limit ?? 500, 1), 1000);
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
  const prereqs = await prerequisitesOf(
    db,
    projectId,
    page.map((r) => r.id),
  );
  return {
    tasks: page.map((r) => taskFromRow(r, prereqs.get(r.id) ?? [])),
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
  const prereqs = await prerequisitesOf(db, projectId, [taskId]);
  return taskFromRow(row, prereqs.get(taskId) ?? []);
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
