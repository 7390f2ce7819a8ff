import type { ApplyResult } from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { ConflictError } from "./db-errors.ts";
import type { RidingWrites } from "./riding-writes.ts";
import { type RunReport, runReportColumns } from "./run-report-columns.ts";
import { runUpdateRides } from "./run-repository.ts";

/**
 * New runs are inserted; a started or ended run is updated only while it is still active, with
 * the worker's report when it is the run the command names: its update rides on `writes` (the
 * events' statement), guarded. True when that report is written with it. With `rideInserts`
 * (the project row's update follows and carries `writes`), the new runs ride on it too, each
 * one's number read by that statement.
 */
export async function persistRuns(
  db: Db,
  projectId: string,
  result: ApplyResult,
  now: Date,
  report: { runId: string; report: RunReport } | null,
  actionRunNumbers: Map<string, number>,
  writes: RidingWrites,
  rideInserts = false,
): Promise<boolean> {
  const { changes } = result;
  let reported = false;
  // Runs of one task's action inserted by one statement: its snapshot sees none of them.
  const riding = new Map<string, number>();
  for (const run of changes.runs) {
    if (changes.createdRunIds.has(run.id)) {
      const insert = db.insertInto("runs").values({
        id: run.id,
        project_id: projectId,
        task_id: run.taskId,
        agent_id: run.agentId,
        action: run.action,
        attempt: run.attempt,
        status: run.status,
        not_before: run.notBefore === null ? null : new Date(run.notBefore),
        created_at: new Date(run.createdAt),
      });
      // The statement's snapshot does not see the row it inserts: the runs before this one.
      const before = sql<string>`(SELECT count(*) FROM runs o WHERE o.project_id = ${projectId} AND o.task_id = ${run.taskId} AND o.action = ${run.action})`;
      if (rideInserts) {
        const key = `${run.taskId} ${run.action}`;
        const earlier = riding.get(key) ?? 0;
        riding.set(key, earlier + 1);
        writes.add(`run_insert_${writes.size}`, insert);
        writes.read(before, (value) => actionRunNumbers.set(run.id, Number(value) + earlier + 1));
        continue;
      }
      await insert
        .returning(before.as("before"))
        .executeTakeFirstOrThrow()
        .then((row) => actionRunNumbers.set(run.id, Number(row.before) + 1));
      continue;
    }
    const previous = result.state.runs.get(run.id);
    const transcript = report?.runId === run.id ? report.report.transcript : null;
    const ref = { runId: run.id, projectId, taskId: run.taskId };
    const prefix = `run_${writes.size}_`;
    for (const ride of runUpdateRides(db, ref, run.status, transcript, prefix))
      writes.add(ride.name, ride.query);
    const update = db
      .updateTable("runs")
      .set({
        status: run.status,
        transition: run.transition,
        failure: run.failure,
        ...(run.status === "running"
          ? { worker_id: run.workerId, started_at: new Date(run.startedAt ?? now.getTime()) }
          : {}),
        ...(run.status !== "running" && run.status !== "queued" ? { ended_at: now } : {}),
        ...(report?.runId === run.id ? runReportColumns(report.report) : {}),
      })
      .where("id", "=", run.id)
      .where("status", "in", ["queued", "running"])
      .returning("id");
    writes.guard(`${prefix}update`, update, () => {
      return new ConflictError(`Run ${run.id} already ended concurrently; retry.`, {
        runId: run.id,
        status: previous?.status,
      });
    });
    if (report?.runId === run.id) reported = true;
  }
  return reported;
}
