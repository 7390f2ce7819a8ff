import { randomBytes, randomUUID } from "node:crypto";
import {
  type ApplyResult,
  applyCommand,
  applyProjectCreation,
  type Command,
  changesNothing,
  commandRunId,
  type DomainContext,
  type ProjectState,
  type ProjectStatus,
  type Usage,
} from "@overseer/domain";
import { sql } from "kysely";
import { type Db, json } from "./connection.ts";
import type { EventRow, ProjectRow } from "./database-schema.ts";
import {
  ConflictError,
  isSerializationFailure,
  isUniqueViolation,
  ProjectStatusRefusedError,
} from "./db-errors.ts";
import { insertBatches } from "./insert-batches.ts";
import { holdLease } from "./lease-repository.ts";
import { writeOutbox } from "./outbox-repository.ts";
import { loadProjectStateAndIntake } from "./project-state-repository.ts";
import { persistPullRequests } from "./pull-request-repository.ts";
import { taskMutableColumns } from "./row-mappers.ts";
import { type RunReport, runReportColumns, storeRunReport } from "./run-report-columns.ts";
import { runUpdater } from "./run-repository.ts";
import { writeTrackerUpdates } from "./tracker-update-repository.ts";
import { storeRunTranscript } from "./transcript-repository.ts";
import {
  type CreatedRun,
  insertEvents,
  POSTGRES_NOTIFY_CHANNEL,
  type RunJobsBuilder,
  type StoredRunJob,
} from "./transition-events.ts";

export { POSTGRES_NOTIFY_CHANNEL };

import { recordRunUsage } from "./usage-repository.ts";

export interface ApplyOptions {
  /** Coordinator id; when set, the transition applies only while it holds the project's lease. */
  leaseOwner?: string;
  runReport?: RunReport;
  ctx?: Partial<DomainContext>;
  /**
   * Optimistic concurrency from the caller (HTTP `If-Match`): the transition applies only if
   * this task still has this version when read and when written.
   */
  expectedTask?: { taskId: string; version: number };
  /**
   * The project states the caller may act in (the gateway's authorization table): the
   * transition applies only if the project is in one of them when read, in the same
   * transaction as the write (ProjectStatusRefusedError otherwise).
   */
  projectStatusIn?: readonly ProjectStatus[];
  /**
   * Who applies it (a coordinator's id), carried by the commit's NOTIFY: a coordinator skips
   * the notifications of its own commits, which it already acted on. Default: none.
   */
  origin?: string;
  /**
   * The jobs of the runs the transition creates (a claim's), built and stored in its
   * transaction (transition-events.ts): a claimed run's job costs no commit of its own.
   */
  runJobs?: RunJobsBuilder;
}

/**
 * A NOTIFY payload on `POSTGRES_NOTIFY_CHANNEL`: the project's id, then, when the commit was a
 * coordinator's, a space and its id. Project ids hold no space (PROJECT_ID_PATTERN).
 */
export function notifyPayload(projectId: string, origin?: string): string {
  return origin ? `${projectId} ${origin}` : projectId;
}

/** The project and origin (null: not a coordinator) of a `POSTGRES_NOTIFY_CHANNEL` payload. */
export function parseNotifyPayload(payload: string): { projectId: string; origin: string | null } {
  const space = payload.indexOf(" ");
  return space < 0
    ? { projectId: payload, origin: null }
    : { projectId: payload.slice(0, space), origin: payload.slice(space + 1) };
}

export function defaultDomainContext(overrides: Partial<DomainContext> = {}): DomainContext {
  return {
    now: Date.now(),
    randomHex: () => randomBytes(6).toString("hex"),
    newRunId: () => randomUUID(),
    ...overrides,
  };
}

/**
 * Applies one command to one project as a single transaction:
 *   load state → domain.applyCommand → persist changes with optimistic concurrency
 *   (each changed task row must still have the version that was read; each ended run must
 *   still be active) → append events → NOTIFY.
 * A concurrent change makes it throw ConflictError and write nothing. A redelivered run
 * outcome returns `already_applied` and writes nothing: transitions are idempotent by run id.
 */
export interface AppliedTransition extends ApplyResult {
  /** The events as stored (with their ids), for live publication after commit. */
  readonly eventRows: readonly EventRow[];
  /**
   * Each created run's number among its task's runs of its action (1 for the first execute),
   * counted as it was inserted; absent when the transition created no run.
   */
  readonly actionRunNumbers?: ReadonlyMap<string, number>;
  /**
   * The project's row as this transaction's update of it left it (the whole row, read back by
   * the update itself), or null when the transaction did not update the project row. The spend
   * columns are those before this transaction's usage, if it recorded some.
   */
  readonly projectRow: ProjectRow | null;
  /**
   * Whether the command's usage grew the run's recorded spend (recordRunUsage): false for a
   * result delivered again, whose spend the first delivery recorded, and for no usage.
   */
  readonly usageRecorded: boolean;
}

export async function applyTransition(
  db: Db,
  projectId: string,
  command: Command,
  options: ApplyOptions = {},
): Promise<AppliedTransition> {
  // REPEATABLE READ: every read of the state machine's input comes from one snapshot; a
  // concurrent write to a row we update surfaces as a serialization failure → ConflictError.
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => {
      const runId = commandRunId(command);
      const ctx = defaultDomainContext(options.ctx);
      if (command.kind === "create-project" && options.leaseOwner !== undefined)
        await holdLease(trx, projectId, options.leaseOwner);
      if (command.kind === "create-project" && !(await projectExists(trx, projectId))) {
        if (command.project.id !== projectId)
          throw new Error(`create-project for ${command.project.id} was applied to project ${projectId}`);
        const created = applyProjectCreation(command, ctx);
        const payload = notifyPayload(projectId, options.origin);
        const { eventRows, notified } = await persist(trx, projectId, created, ctx.now, new Map(), {
          payload,
        });
        if (!notified) await notify(trx, projectId, options.origin);
        return { ...created, eventRows, projectRow: null, usageRecorded: false };
      }
      // The lease of a claim (`leaseOwner`) is checked and held by the load itself: no statement of its own.
      const { state, intakeTaskIds } = await loadProjectStateAndIntake(trx, projectId, {
        runIds: runId ? [runId] : [],
        decisionIds: command.kind === "resolve-decision" ? [command.decisionId] : [],
        leaseOwner: command.kind === "create-project" ? undefined : options.leaseOwner,
      });
      const allowed = options.projectStatusIn;
      if (allowed && !allowed.includes(state.project.status))
        throw new ProjectStatusRefusedError(projectId, state.project.status, allowed);
      if (options.expectedTask) {
        const { taskId, version } = options.expectedTask;
        const current = state.tasks.get(taskId)?.version;
        if (current !== version) {
          throw new ConflictError(
            `Task ${taskId} is at version ${current ?? "none"}, not ${version}; reload and retry.`,
            {
              taskId,
              expectedVersion: version,
              actualVersion: current ?? null,
            },
          );
        }
      }
      const result = applyCommand(state, command, ctx);
      const usage = "usage" in command ? command.usage : undefined;
      if (result.outcome === "already_applied") {
        // The run ended without this result (cancelled, stopped, or the result was delivered
        // before): what it spent still counts, once (recorded as the largest report), and what
        // it did is kept (the same transcript again changes nothing).
        if (runId && options.runReport?.transcript)
          await storeRunTranscript(trx, runId, options.runReport.transcript);
        const usageRecorded = !!usage && !!runId && (await recordRunUsage(trx, projectId, runId, usage));
        // The spend changed: the project's coordinator checks it against its budgets in a pass
        // (asked for by its NOTIFY, or by the applying coordinator itself: it skips its own).
        if (usageRecorded) await notify(trx, projectId, options.origin);
        return { ...result, eventRows: [], projectRow: null, usageRecorded };
      }
      // A command that changed nothing (a scheduling pass with nothing to claim) writes
      // nothing and notifies no one: a NOTIFY here would wake every listener for nothing,
      // and a coordinator that schedules on NOTIFY would loop.
      if (changesNothing(result)) return { ...result, eventRows: [], projectRow: null, usageRecorded: false };
      // The run's report rides on the run's own update, the NOTIFY on the events' insert.
      const report = runId && options.runReport ? { runId, report: options.runReport } : null;
      const payload = notifyPayload(projectId, options.origin);
      // The mission's spend bound sits beside the spend it bounds (the coordinator pauses at it).
      const missionBudgetUsd = command.kind === "start-mission" ? command.budgetUsd : undefined;
      const written = await persist(trx, projectId, result, ctx.now, state.tasks, {
        payload,
        report,
        intakeTaskIds,
        missionBudgetUsd,
        runJobs: options.runJobs,
      });
      const { eventRows } = written;
      if (runId && options.runReport && !written.reported) {
        await storeRunReport(trx, runId, options.runReport);
        if (options.runReport.transcript) await storeRunTranscript(trx, runId, options.runReport.transcript);
      }
      const usageRecorded = !!usage && !!runId && (await recordRunUsage(trx, projectId, runId, usage));
      if (!written.notified) await notify(trx, projectId, options.origin);
      const { actionRunNumbers, projectRow } = written;
      return { ...result, eventRows, actionRunNumbers, projectRow, usageRecorded };
    })
    .catch((error: unknown) => {
      if (isSerializationFailure(error)) {
        throw new ConflictError("A concurrent transition changed this project; nothing was written. Retry.", {
          cause: String((error as Error).message),
        });
      }
      throw error;
    });
}

/** Wakes the listeners of `POSTGRES_NOTIFY_CHANNEL` at commit (notifyPayload). */
async function notify(db: Db, projectId: string, origin?: string): Promise<void> {
  await sql`SELECT pg_notify(${POSTGRES_NOTIFY_CHANNEL}, ${notifyPayload(projectId, origin)})`.execute(db);
}

async function projectExists(db: Db, projectId: string): Promise<boolean> {
  const row = await db.selectFrom("projects").select("id").where("id", "=", projectId).executeTakeFirst();
  return row !== undefined;
}

/**
 * Writes one applied command's changes, phase by phase in a fixed order (new tasks, changed
 * tasks and their pull requests, runs, decision cards, the project row, incidents, events). Each phase checks the
 * optimistic-concurrency version of what it updates and throws ConflictError on a mismatch.
 */
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

async function persist(
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
  try {
    if (changes.createdProject) await insertProjectRow(db, changes.createdProject, now);
    await insertCreatedTasks(db, projectId, changes);
    await updateChangedTasks(db, projectId, changes, now);
    await persistPullRequests(db, projectId, changes.tasks, before, now);
    reported = await persistRuns(db, projectId, result, now, extras.report ?? null, actionRunNumbers);
    await persistDecisions(db, projectId, changes, now);
    if (changes.project) {
      const { settings } = changes;
      const budget = extras.missionBudgetUsd;
      const patch = budget === undefined ? settings : { ...settings, budgetUsd: budget };
      projectRow = await updateProjectRow(db, projectId, changes.project, patch, now);
    }
  } catch (error) {
    if (isUniqueViolation(error))
      throw new ConflictError("A concurrent transition created the same row; retry.", {
        cause: String(error),
      });
    throw error;
  }
  await insertIncidents(db, projectId, result.incidents);
  const jobs = await createdRunJobs(db, result, projectRow, actionRunNumbers, extras.runJobs);
  const eventRows = await insertEvents(db, projectId, result.events, extras.payload, jobs);
  // The notifications of these events, in the same transaction (the outbox).
  await writeOutbox(db, projectId, result.events, changes.decisions, eventRows);
  // What the issues of intake-made tasks hear (two-way status), in the same transaction too.
  const intakeTaskIds = extras.intakeTaskIds ?? new Set<string>();
  await writeTrackerUpdates(db, projectId, result.events, eventRows, changes.tasks, before, intakeTaskIds);
  return { eventRows, notified: eventRows.length > 0, reported, actionRunNumbers, projectRow };
}

type Changes = ApplyResult["changes"];

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

/** New tasks and their dependency edges, in multi-row batches. */
async function insertCreatedTasks(db: Db, projectId: string, changes: Changes): Promise<void> {
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

/** Changed tasks, each only if still at the version the command was applied to. */
async function updateChangedTasks(db: Db, projectId: string, changes: Changes, now: Date): Promise<void> {
  for (const task of changes.tasks) {
    if (changes.createdTaskIds.has(task.id)) continue;
    const updated = await db
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
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) {
      throw new ConflictError(
        `Task ${task.id} changed concurrently (expected version ${task.version}); retry.`,
        {
          taskId: task.id,
          expectedVersion: task.version,
        },
      );
    }
  }
}

/**
 * New runs are inserted; a started or ended run is updated only while it is still active, with
 * the worker's report when it is the run the command names. True when that report was written.
 */
async function persistRuns(
  db: Db,
  projectId: string,
  result: ApplyResult,
  now: Date,
  report: { runId: string; report: RunReport } | null,
  actionRunNumbers: Map<string, number>,
): Promise<boolean> {
  const { changes } = result;
  let reported = false;
  for (const run of changes.runs) {
    if (changes.createdRunIds.has(run.id)) {
      await db
        .insertInto("runs")
        .values({
          id: run.id,
          project_id: projectId,
          task_id: run.taskId,
          agent_id: run.agentId,
          action: run.action,
          attempt: run.attempt,
          status: run.status,
          not_before: run.notBefore === null ? null : new Date(run.notBefore),
          created_at: new Date(run.createdAt),
        })
        // The statement's snapshot does not see the row it inserts: the runs before this one.
        .returning(
          sql<string>`(SELECT count(*) FROM runs o WHERE o.project_id = ${projectId} AND o.task_id = ${run.taskId} AND o.action = ${run.action})`.as(
            "before",
          ),
        )
        .executeTakeFirstOrThrow()
        .then((row) => actionRunNumbers.set(run.id, Number(row.before) + 1));
      continue;
    }
    const previous = result.state.runs.get(run.id);
    const transcript = report?.runId === run.id ? report.report.transcript : null;
    const updater = runUpdater(db, { runId: run.id, projectId, taskId: run.taskId }, run.status, transcript);
    const updated = await updater
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
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) {
      throw new ConflictError(`Run ${run.id} already ended concurrently; retry.`, {
        runId: run.id,
        status: previous?.status,
      });
    }
    if (report?.runId === run.id) reported = true;
  }
  return reported;
}

/** New decision cards are inserted; a re-asked or resolved card replaces the stored one. */
async function persistDecisions(db: Db, projectId: string, changes: Changes, now: Date): Promise<void> {
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

/** The project row, only if still at the version the command was applied to. */
/** create-project: the new row (its id is unique: a concurrent create is a ConflictError, then already_exists). */
async function insertProjectRow(db: Db, p: NonNullable<Changes["createdProject"]>, now: Date): Promise<void> {
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

async function updateProjectRow(
  db: Db,
  projectId: string,
  p: NonNullable<Changes["project"]>,
  settings: Changes["settings"],
  now: Date,
): Promise<ProjectRow> {
  const updated = await db
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
    .executeTakeFirst();
  if (!updated) throw new ConflictError(`Project ${projectId} changed concurrently; retry.`);
  return updated;
}

async function insertIncidents(
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

/**
 * A running run's usage report (the worker's `run-usage` message): recorded as the largest of
 * what the run has (recordRunUsage), and when the spend grew, the project's coordinator is woken
 * to check it against the budgets. True when it grew.
 */
export async function recordUsageReport(
  db: Db,
  projectId: string,
  runId: string,
  usage: Usage,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const grown = await recordRunUsage(trx, projectId, runId, usage);
    if (grown) await sql`SELECT pg_notify(${POSTGRES_NOTIFY_CHANNEL}, ${projectId})`.execute(trx);
    return grown;
  });
}
