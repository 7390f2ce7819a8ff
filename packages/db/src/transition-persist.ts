/**
 * The writes of one applied command (applyTransition), in one transaction: its rows, then its
 * events with the NOTIFY and the created runs' jobs, then the outbox and tracker updates.
 */
import type { ApplyResult, ProjectState } from "@overseer/domain";
import type { Db } from "./connection.ts";
import type { EventRow, ProjectRow } from "./database-schema.ts";
import { ConflictError, isUniqueViolation } from "./db-errors.ts";
import { writeOutbox } from "./outbox-repository.ts";
import { persistPullRequests } from "./pull-request-repository.ts";
import { RidingWrites } from "./riding-writes.ts";
import type { RunReport } from "./run-report-columns.ts";
import { writeTrackerUpdates } from "./tracker-update-repository.ts";
import {
  type CreatedRun,
  insertEvents,
  type RunJobsBuilder,
  type StoredRunJob,
} from "./transition-events.ts";
import {
  insertCreatedTasks,
  insertIncidents,
  insertProjectRow,
  persistDecisions,
  updateChangedTasks,
  updateProjectRow,
} from "./transition-row-writes.ts";
import { persistRuns } from "./transition-run-writes.ts";

/** What `persist` wrote besides the changes: the NOTIFY (with the events) and the run's report. */
interface Persisted {
  eventRows: EventRow[];
  /** The NOTIFY was sent with the events (there were some). */
  notified: boolean;
  /** The run report was written with the run's own update. */
  reported: boolean;
  actionRunNumbers: ReadonlyMap<string, number>;
  /** The project row as its update left it; null when it was not updated. */
  projectRow: ProjectRow | null;
}

/** The transition's NOTIFY payload, and the report of the run it names (if any). */
interface PersistExtras {
  payload: string;
  report?: { runId: string; report: RunReport } | null;
  /** The project's tasks that came from an intake item (none: no tracker update is written). */
  intakeTaskIds?: ReadonlySet<string>;
  /** start-mission's spend bound, written with the project row (the mission changes it). */
  missionBudgetUsd?: number | null | undefined;
  /** Builds the created runs' jobs, stored with the events (ApplyOptions.runJobs). */
  runJobs?: RunJobsBuilder | undefined;
}

/**
 * Writes one applied command's changes, phase by phase in a fixed order (new tasks, changed
 * tasks and their pull requests, runs, decision cards, the project row, incidents, events).
 * Each phase checks the optimistic-concurrency version of what it updates and throws
 * ConflictError on a mismatch. The task and run updates are not statements of their own: they
 * ride on the events' statement (riding-writes.ts), which checks their guards.
 */
export async function persist(
  db: Db,
  projectId: string,
  result: ApplyResult,
  at: number,
  before: ProjectState["tasks"],
  extras: PersistExtras,
): Promise<Persisted> {
  const { changes } = result;
  const now = new Date(at);
  let reported = false;
  let projectRow: ProjectRow | null = null;
  const actionRunNumbers = new Map<string, number>();
  // The task and run updates ride on the events' statement (riding-writes.ts).
  const writes = new RidingWrites();
  try {
    if (changes.createdProject) await insertProjectRow(db, changes.createdProject, now);
    await insertCreatedTasks(db, projectId, changes);
    updateChangedTasks(db, projectId, changes, now, writes);
    await persistPullRequests(db, projectId, changes.tasks, before, now);
    const report = extras.report ?? null;
    // The new runs ride on the project row's update when it follows and nothing before it
    // (a decision card) refers to them.
    const rideInserts = changes.project !== null && changes.decisions.length === 0;
    reported = await persistRuns(db, projectId, result, now, report, actionRunNumbers, writes, rideInserts);
    await persistDecisions(db, projectId, changes, now);
    if (changes.project) {
      const { settings } = changes;
      const budget = extras.missionBudgetUsd;
      const patch = budget === undefined ? settings : { ...settings, budgetUsd: budget };
      // The task and run updates ride on it (none left for the events' statement).
      projectRow = await updateProjectRow(db, projectId, changes.project, patch, now, writes);
    }
  } catch (error) {
    if (isUniqueViolation(error))
      throw new ConflictError("A concurrent transition created the same row; retry.", {
        cause: String(error),
      });
    throw error;
  }
  await insertIncidents(db, projectId, result.incidents);
  // A claim's job builder reads the transaction: what it reads is written first (with the
  // project row's update, when there was one).
  if (extras.runJobs && changes.createdRunIds.size > 0) await writes.flush(db);
  const jobs = await createdRunJobs(db, result, projectRow, actionRunNumbers, extras.runJobs);
  const eventRows = await insertEvents(db, projectId, result.events, extras.payload, jobs, writes);
  // The notifications of these events, in the same transaction (the outbox).
  await writeOutbox(db, projectId, result.events, changes.decisions, eventRows);
  // What the issues of intake-made tasks hear (two-way status), in the same transaction too.
  const intakeTaskIds = extras.intakeTaskIds ?? new Set<string>();
  await writeTrackerUpdates(db, projectId, result.events, eventRows, changes.tasks, before, intakeTaskIds);
  return { eventRows, notified: eventRows.length > 0, reported, actionRunNumbers, projectRow };
}

/** The created runs' jobs (ApplyOptions.runJobs), none when the transition created no run. */
async function createdRunJobs(
  db: Db,
  result: ApplyResult,
  projectRow: ProjectRow | null,
  numbers: ReadonlyMap<string, number>,
  build: RunJobsBuilder | undefined,
): Promise<ReadonlyMap<string, StoredRunJob>> {
  const { changes } = result;
  const runs: CreatedRun[] = changes.runs.flatMap((run) => {
    const number = numbers.get(run.id);
    return changes.createdRunIds.has(run.id) && number !== undefined ? [{ run, number }] : [];
  });
  if (!build || runs.length === 0) return new Map();
  return build({ state: result.state, projectRow, runs }, db);
}
