/**
 * Applies one command to one project as a single transaction (applyTransition); its writes are
 * transition-persist.ts's, its NOTIFY transition-notify.ts's.
 */
import { randomBytes, randomUUID } from "node:crypto";
import {
  type ApplyResult,
  applyCommand,
  applyProjectCreation,
  type Command,
  changesNothing,
  commandRunId,
  type DomainContext,
  type ProjectStatus,
  type Usage,
} from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { EventRow, ProjectRow } from "./database-schema.ts";
import { ConflictError, isSerializationFailure, ProjectStatusRefusedError } from "./db-errors.ts";
import { holdLease } from "./lease-repository.ts";
import { loadProjectStateAndIntake } from "./project-state-repository.ts";
import { type RunReport, storeRunReport } from "./run-report-columns.ts";
import { storeRunTranscript } from "./transcript-repository.ts";
import { POSTGRES_NOTIFY_CHANNEL, type RunJobsBuilder } from "./transition-events.ts";
import { notify, notifyPayload } from "./transition-notify.ts";
import { persist } from "./transition-persist.ts";
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

export function defaultDomainContext(overrides: Partial<DomainContext> = {}): DomainContext {
  return {
    now: Date.now(),
    randomHex: () => randomBytes(6).toString("hex"),
    newRunId: () => randomUUID(),
    ...overrides,
  };
}

/** What applyTransition returns: the domain result and what its transaction wrote. */
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

/**
 * Applies one command to one project as a single transaction:
 *   load state → domain.applyCommand → persist changes with optimistic concurrency
 *   (each changed task row must still have the version that was read; each ended run must
 *   still be active) → append events → NOTIFY.
 * A concurrent change makes it throw ConflictError and write nothing. A redelivered run
 * outcome returns `already_applied` and writes nothing: transitions are idempotent by run id.
 */
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

async function projectExists(db: Db, projectId: string): Promise<boolean> {
  const row = await db.selectFrom("projects").select("id").where("id", "=", projectId).executeTakeFirst();
  return row !== undefined;
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
