import { type Db, listEvents } from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { expect } from "vitest";

/** Whether some run of the project is running. */
export const hasRunning = (s: ProjectState): boolean =>
  [...s.runs.values()].some((r) => r.status === "running");

/** The project's runs (task, action, status, worker) and a counter of its events by type and task. */
export async function projectRows(db: Db, projectId: string) {
  const runs = await db
    .selectFrom("runs")
    .select(["id", "task_id", "action", "status", "worker_id"])
    .where("project_id", "=", projectId)
    .execute();
  const events = await listEvents(db, { projectId, limit: 5000 });
  const count = (type: string, taskId?: string) =>
    events.filter((e) => e.type === type && (!taskId || e.task_id === taskId)).length;
  return { runs, count, events };
}

/**
 * Nothing lost, nothing applied twice: every task was submitted and approved exactly once, it
 * had exactly one execute and one review run, each queued once and finished once.
 */
export async function expectEachTaskDoneOnce(db: Db, projectId: string, taskIds: readonly string[]) {
  const { runs, count } = await projectRows(db, projectId);
  expect(runs.filter((r) => r.status !== "finished")).toEqual([]);
  expect(runs).toHaveLength(2 * taskIds.length);
  expect(count("run.queued")).toBe(2 * taskIds.length);
  for (const id of taskIds) {
    expect(count("task.submitted", id), `${id} submitted`).toBe(1);
    expect(count("task.approved", id), `${id} approved`).toBe(1);
    expect(count("run.finished", id), `${id} runs finished`).toBe(2);
  }
}
