/**
 * What the run fence's tests share, in @overseer/db and in the worker: tasks brought to review
 * (submitted at one head, a review run claimed), a wait until a statement blocks on a row lock
 * the fence holds, and an operator's cancel.
 */
import { applyTransition, createProject, type Db, sql } from "@overseer/db";
import { taskCard } from "./task-card.ts";

/** The head every task of `tasksInReview` was submitted at. */
export const SUBMITTED_HEAD = "a".repeat(40);

/**
 * A new project (concurrency `count`) whose tasks S00-001… were each submitted at
 * SUBMITTED_HEAD and have a review run; the review runs' ids, in task order.
 */
export async function tasksInReview(db: Db, projectId: string, count = 1): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `S00-${String(i + 1).padStart(3, "0")}`);
  await createProject(db, { id: projectId, repo: "/tmp/none", runnerConfig: {}, concurrency: count });
  await applyTransition(db, projectId, {
    kind: "import-tasks",
    tasks: ids.map((id) => taskCard(id)),
    by: "t",
  });
  await applyTransition(db, projectId, { kind: "start-project", by: "t", stage: null, sessionsLimit: null });
  const executes = (await applyTransition(db, projectId, { kind: "claim" })).changes.runs;
  for (const run of executes) {
    await applyTransition(db, projectId, {
      kind: "submit",
      runId: run.id,
      message: "work",
      commitSha: SUBMITTED_HEAD,
      branchHead: SUBMITTED_HEAD,
    });
  }
  const reviews = (await applyTransition(db, projectId, { kind: "claim" })).changes.runs
    .filter((r) => r.action === "review")
    .sort((a, b) => a.taskId.localeCompare(b.taskId));
  if (reviews.length !== count) throw new Error(`${reviews.length} review runs claimed, not ${count}`);
  return reviews.map((r) => r.id);
}

/** An operator's cancel of the task. */
export function cancelTask(db: Db, projectId: string, taskId = "S00-001") {
  return applyTransition(db, projectId, { kind: "cancel", taskId, by: "operator" });
}

/**
 * Waits until a transaction of this database holds row locks on `table` and sits open between
 * statements (a fence that took its locks and now waits for its push): a fence opened without
 * waiting for it (the worker's `open`) locks in the background, and a cancel started before
 * that would not wait.
 */
export async function waitForRowLocksHeld(db: Db, table: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
      WHERE a.datname = current_database() AND a.state = 'idle in transaction' AND l.granted
        AND l.relation = to_regclass(${table}) AND l.mode IN ('RowShareLock', 'RowExclusiveLock')`.execute(
      db,
    );
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no open transaction held row locks on ${table} within 2 s`);
}

/** Waits until a statement naming `table` waits on a lock (another transaction holds its row). */
export async function waitForLockWait(db: Db, table: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ${`%${table}%`}`.execute(
      db,
    );
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no statement on ${table} waited on a lock within 2 s`);
}
