import type { Decision, ProjectState, Run, Task } from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { NotFoundError } from "./db-errors.ts";
import { loadPullRequests } from "./pull-request-repository.ts";
import { decisionFromRow, projectControlFromRow, runFromRow, taskFromRow } from "./row-mappers.ts";

export interface LoadStateOptions {
  /** Runs to include even if they already ended (the run a command names). */
  runIds?: readonly string[];
  /** Decisions to include even if resolved. */
  decisionIds?: readonly string[];
}

/**
 * Loads what the state machine needs for one project: the project row, every task with its
 * prerequisites and pull request, every active run (plus named runs), every pending decision
 * (plus named ones). Six queries, whatever the number of tasks.
 */
export async function loadProjectState(
  db: Db,
  projectId: string,
  options: LoadStateOptions = {},
): Promise<ProjectState> {
  const projectRow = await db
    .selectFrom("projects")
    .selectAll()
    .where("id", "=", projectId)
    .executeTakeFirst();
  if (!projectRow) throw new NotFoundError(`Project ${projectId} does not exist.`);
  const runIds = options.runIds ?? [];
  const decisionIds = options.decisionIds ?? [];
  const [taskRows, deps, runRows, decisionRows, pullRequests] = await Promise.all([
    db.selectFrom("tasks").selectAll().where("project_id", "=", projectId).execute(),
    db
      .selectFrom("task_dependencies")
      .select(["task_id", "depends_on"])
      .where("project_id", "=", projectId)
      .execute(),
    db
      .selectFrom("runs")
      .selectAll()
      .where("project_id", "=", projectId)
      .where((eb) =>
        runIds.length > 0
          ? eb.or([eb("status", "in", ["queued", "running"]), eb("id", "in", runIds)])
          : eb("status", "in", ["queued", "running"]),
      )
      .execute(),
    db
      .selectFrom("decisions")
      .selectAll()
      .where("project_id", "=", projectId)
      .where((eb) => {
        const wanted = [eb("status", "=", "pending")];
        if (decisionIds.length > 0) wanted.push(eb("id", "in", decisionIds));
        // The (resolved) card of a named run's task: a re-asked card must grow its revision
        // instead of being inserted twice (decisionIdFor: `decision-<task>`).
        if (runIds.length > 0)
          wanted.push(
            eb(
              "id",
              "in",
              eb
                .selectFrom("runs")
                .select(sql<string>`'decision-' || runs.task_id`.as("card_id"))
                .where("runs.project_id", "=", projectId)
                .where("runs.id", "in", runIds),
            ),
          );
        return eb.or(wanted);
      })
      .execute(),
    loadPullRequests(db, projectId),
  ]);
  const prereqs = new Map<string, string[]>();
  for (const d of deps) {
    const list = prereqs.get(d.task_id) ?? [];
    list.push(d.depends_on);
    prereqs.set(d.task_id, list);
  }
  const tasks = new Map<string, Task>(
    taskRows.map((r) => [r.id, taskFromRow(r, prereqs.get(r.id) ?? [], pullRequests.get(r.id) ?? null)]),
  );
  const runs = new Map<string, Run>(runRows.map((r) => [r.id, runFromRow(r)]));
  const decisions = new Map<string, Decision>(decisionRows.map((r) => [r.id, decisionFromRow(r)]));
  return { project: projectControlFromRow(projectRow), tasks, runs, decisions };
}

/** loadProjectState from one consistent snapshot (a read-only REPEATABLE READ transaction). */
export async function loadProjectSnapshot(
  db: Db,
  projectId: string,
  options: LoadStateOptions = {},
): Promise<ProjectState> {
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .setAccessMode("read only")
    .execute((trx) => loadProjectState(trx, projectId, options));
}
