/**
 * The row writes of an applied command besides its runs and events (transition-persist.ts):
 * new and changed tasks, decision cards, the project row and incidents. Each update checks the
 * optimistic-concurrency version of what it updates and throws ConflictError on a mismatch.
 */
import type { ApplyResult } from "@overseer/domain";
import { type Db, json } from "./connection.ts";
import type { ProjectRow } from "./database-schema.ts";
import { ConflictError } from "./db-errors.ts";
import { insertBatches } from "./insert-batches.ts";
import { RidingWrites } from "./riding-writes.ts";
import { taskMutableColumns } from "./row-mappers.ts";

type Changes = ApplyResult["changes"];

/** New tasks and their dependency edges, in multi-row batches. */
export async function insertCreatedTasks(db: Db, projectId: string, changes: Changes): Promise<void> {
  const created = changes.tasks.filter((t) => changes.createdTaskIds.has(t.id));
  if (created.length > 0) {
    // Multi-row inserts (batched under the bind-parameter limit) however many tasks an import creates.
    const rows = created.map((task) => ({
      project_id: projectId,
      id: task.id,
      stage: task.stage,
      title: task.title,
      body: task.body,
      role: task.role,
      scope: [...task.scope],
      acceptance: [...task.acceptance],
      priority: task.priority,
      kind: task.kind,
      parent_id: task.parentId,
      root_id: task.rootId,
      depth: task.depth,
      answers: json(task.answers),
      ...taskMutableColumns(task),
    }));
    for (const batch of insertBatches(rows)) await db.insertInto("tasks").values(batch).execute();
    const dependencies = created.flatMap((task) =>
      task.prerequisites.map((p) => ({ project_id: projectId, task_id: task.id, depends_on: p })),
    );
    for (const batch of insertBatches(dependencies)) {
      await db.insertInto("task_dependencies").values(batch).execute();
    }
  }
}

/**
 * Changed tasks, each only if still at the version the command was applied to: the updates
 * ride on `writes` (the events' statement), each guarded.
 */
export function updateChangedTasks(
  db: Db,
  projectId: string,
  changes: Changes,
  now: Date,
  writes: RidingWrites,
): void {
  for (const task of changes.tasks) {
    if (changes.createdTaskIds.has(task.id)) continue;
    const update = db
      .updateTable("tasks")
      .set({
        ...taskMutableColumns(task),
        answers: json(task.answers),
        version: task.version + 1,
        updated_at: now,
      })
      .where("project_id", "=", projectId)
      .where("id", "=", task.id)
      .where("version", "=", task.version)
      .returning("id");
    writes.guard(`task_${writes.size}`, update, () => {
      const message = `Task ${task.id} changed concurrently (expected version ${task.version}); retry.`;
      return new ConflictError(message, { taskId: task.id, expectedVersion: task.version });
    });
  }
}

/** New decision cards are inserted; a re-asked or resolved card replaces the stored one. */
export async function persistDecisions(
  db: Db,
  projectId: string,
  changes: Changes,
  now: Date,
): Promise<void> {
  for (const d of changes.decisions) {
    const values = {
      item_id: d.itemId,
      revision: d.revision,
      status: d.status,
      title: d.title,
      reason: d.reason,
      question: d.question,
      evidence: json(d.evidence),
      options: json(d.options),
      options_source: d.optionsSource,
      selected_option: d.selectedOption,
      note: d.note,
      resolution_id: d.resolutionId,
      resolved_by: d.resolvedBy,
      resolved_at: d.resolvedAt === null ? null : new Date(d.resolvedAt),
    };
    if (changes.createdDecisionIds.has(d.id)) {
      await db
        .insertInto("decisions")
        .values({ project_id: projectId, id: d.id, ...values })
        .execute();
      continue;
    }
    // Re-asked cards (revision + 1) replace a resolved card; resolving requires it still pending.
    const updated = await db
      .updateTable("decisions")
      .set({ ...values, ...(d.status === "pending" ? { created_at: now } : {}) })
      .where("project_id", "=", projectId)
      .where("id", "=", d.id)
      .where((eb) =>
        d.status === "pending" ? eb("revision", "=", d.revision - 1) : eb("status", "=", "pending"),
      )
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) {
      throw new ConflictError(`Decision ${d.id} changed concurrently; retry.`, { decisionId: d.id });
    }
  }
}

/** create-project: the new row (its id is unique: a concurrent create is a ConflictError, then already_exists). */
export async function insertProjectRow(
  db: Db,
  p: NonNullable<Changes["createdProject"]>,
  now: Date,
): Promise<void> {
  await db
    .insertInto("projects")
    .values({
      id: p.id,
      name: p.name,
      repo: p.repo,
      branch: p.branch,
      repo_kind: p.repoKind,
      objective: p.objective,
      runner_config: json(p.runnerConfig),
      concurrency: p.concurrency,
      continuous: p.continuous,
      budget_usd: p.budgetUsd,
      status: p.status,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/** The project row, only if still at the version the command was applied to. */
/**
 * Updates the project row at the version read (ConflictError otherwise) and returns it as the
 * update left it. `writes` (the transition's task and run updates, a claim's new runs) ride on
 * it and are settled by it: a claim's job builder reads them next, and they would otherwise cost
 * a statement each.
 */
export async function updateProjectRow(
  db: Db,
  projectId: string,
  p: NonNullable<Changes["project"]>,
  settings: Changes["settings"],
  now: Date,
  writes: RidingWrites = new RidingWrites(),
): Promise<ProjectRow> {
  const updated = await writes
    .on(db)
    .updateTable("projects")
    .set({
      status: p.status,
      status_reason: p.statusReason,
      continuous: p.continuous,
      stage: p.stage,
      sessions_limit: p.sessionsLimit,
      mission: p.mission === null ? null : json(p.mission),
      ...(p.mission ? { objective: p.mission.objective } : {}),
      ...(settings?.objective !== undefined ? { objective: settings.objective } : {}),
      ...(settings?.runnerConfig !== undefined ? { runner_config: json(settings.runnerConfig) } : {}),
      ...(settings?.budgetUsd !== undefined ? { budget_usd: settings.budgetUsd } : {}),
      ...(settings?.repoKind !== undefined ? { repo_kind: settings.repoKind } : {}),
      concurrency: p.concurrency,
      sessions_used: p.sessionsUsed,
      version: p.version + 1,
      updated_at: now,
    })
    .where("id", "=", projectId)
    .where("version", "=", p.version)
    .returningAll()
    .returning(writes.counts().as("guard_counts"))
    .$if(writes.reading, (qb) => qb.returning(writes.values().as("ride_values")))
    .executeTakeFirst();
  if (!updated) throw new ConflictError(`Project ${projectId} changed concurrently; retry.`);
  const { guard_counts, ride_values, ...row } = updated;
  writes.settled(guard_counts, ride_values);
  return row;
}

export async function insertIncidents(
  db: Db,
  projectId: string,
  incidents: ApplyResult["incidents"],
): Promise<void> {
  if (incidents.length > 0) {
    await db
      .insertInto("incidents")
      .values(
        incidents.map((i) => ({
          project_id: projectId,
          task_id: i.taskId,
          run_id: i.runId,
          kind: i.kind,
          message: i.message,
          details: json(i.details),
        })),
      )
      .execute();
  }
}
