/**
 * Two-way status, tracker side (migration 0023): `writeTrackerUpdates` runs inside a
 * transition's transaction and writes one `tracker_updates` row per moment of a task that came
 * from an intake item (started, PR opened, done, blocked, PR merged), once per (item, moment,
 * occurrence); a project paused at a bound is a `blocked` moment of each of its intake-made tasks
 * under way. The rest serves the coordinator's delivery jobs.
 */
import type { DomainEvent, Task } from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { EventRow } from "./database-schema.ts";
import type { TrackerUpdatesTable } from "./intake-schema.ts";

/** Sent (payload: the project id) by a transaction that wrote tracker updates or asked for a redelivery. */
export const TRACKER_UPDATE_NOTIFY_CHANNEL = "overseer_tracker_updates";

export type TrackerMoment = TrackerUpdatesTable["moment"];

export interface TrackerUpdateRow {
  readonly id: string;
  readonly key: string;
  readonly source_id: string;
  readonly issue_id: string;
  readonly project_id: string;
  readonly task_id: string;
  readonly moment: TrackerMoment;
  readonly occurrence: string;
  readonly event_id: string | null;
  /** `bound` is set on a `blocked` moment that is the project's pause at a bound. */
  readonly data: { pullRequestUrl?: string | null; detail?: string | null; bound?: string | null };
  readonly status: "pending" | "delivered" | "dead";
  readonly attempts: number;
  readonly last_error: string | null;
  readonly last_attempt_at: Date | null;
  readonly delivered_at: Date | null;
  readonly created_at: Date;
}

interface Moment {
  readonly task_id: string;
  readonly moment: TrackerMoment;
  /** Once per item for started, done and merged; per PR number; per event for blocked. */
  readonly occurrence: string;
  readonly event_id: string | null;
  readonly data: Record<string, unknown>;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** The moment one event of an intake-made task is, if any (pure). */
function eventMoment(event: DomainEvent, eventId: string | null, index: number, url: string | null) {
  const at = (moment: TrackerMoment, occurrence: string, data: Record<string, unknown> = {}): Moment => ({
    task_id: event.taskId ?? "",
    moment,
    occurrence,
    event_id: eventId,
    data,
  });
  switch (event.type) {
    case "run.started":
      return at("started", "first");
    case "pr.opened":
      return at("pr_opened", String(event.data.number ?? "first"), {
        pullRequestUrl: text(event.data.url) ?? url,
      });
    case "pr.merged":
      return at("merged", "first", { pullRequestUrl: url });
    case "task.blocked":
    case "task.awaiting_input":
      return at("blocked", String(eventId ?? index), {
        detail: text(event.data.message) ?? text(event.data.reason),
      });
    default:
      return null;
  }
}

/** Work under way that a pause stops: running or in review, or back to do after a first attempt. */
function underWay(task: Task): boolean {
  if (task.status === "in_progress" || task.status === "review") return true;
  return task.status === "todo" && (task.executorAgentId !== null || task.failures > 0);
}

/**
 * A project paused at a bound (budget, sessions, rounds) blocks every intake-made task whose work
 * had begun until an operator starts it again: one `blocked` moment each, per pause (pure).
 */
function pauseMoments(
  event: DomainEvent,
  eventId: string | null,
  index: number,
  tasks: readonly Task[],
  before: ReadonlyMap<string, Task>,
  intakeTaskIds: ReadonlySet<string>,
): Moment[] {
  if (event.type !== "project.status_changed" || event.data.status !== "paused") return [];
  if (typeof event.data.bound !== "string") return [];
  const bound = event.data.bound;
  const detail = text(event.data.reason) ?? `${bound} bound reached`;
  const out: Moment[] = [];
  for (const taskId of intakeTaskIds) {
    const task = tasks.find((t) => t.id === taskId) ?? before.get(taskId);
    if (!task || !underWay(task)) continue;
    out.push({
      task_id: taskId,
      moment: "blocked",
      occurrence: String(eventId ?? index),
      event_id: eventId,
      data: { detail, bound },
    });
  }
  return out;
}

/** The moments of one transition (pure): its events, plus the tasks that became done in it. */
function momentsOf(
  events: readonly DomainEvent[],
  eventRows: readonly EventRow[],
  tasks: readonly Task[],
  before: ReadonlyMap<string, Task>,
  intakeTaskIds: ReadonlySet<string>,
): Moment[] {
  const out: Moment[] = [];
  events.forEach((event, index) => {
    if (event.taskId === null) {
      out.push(...pauseMoments(event, eventRows[index]?.id ?? null, index, tasks, before, intakeTaskIds));
      return;
    }
    const url = tasks.find((t) => t.id === event.taskId)?.pullRequest?.url ?? null;
    const moment = eventMoment(event, eventRows[index]?.id ?? null, index, url);
    if (moment) out.push(moment);
  });
  const merged = new Set(out.filter((m) => m.moment === "merged").map((m) => m.task_id));
  for (const task of tasks) {
    // A merge already says so; `done` is for a task landed without a pull request.
    if (task.status !== "done" || before.get(task.id)?.status === "done" || merged.has(task.id)) continue;
    out.push({ task_id: task.id, moment: "done", occurrence: "first", event_id: null, data: {} });
  }
  return out;
}

/**
 * Writes the tracker updates of a transition, for the tasks that came from an intake item (not
 * cancelled; `intakeTaskIds`, read with the transition's state); a moment already written for
 * the item is skipped. Returns how many were written. A transition of no intake-made task
 * sends no statement.
 */
export async function writeTrackerUpdates(
  db: Db,
  projectId: string,
  events: readonly DomainEvent[],
  eventRows: readonly EventRow[],
  tasks: readonly Task[],
  before: ReadonlyMap<string, Task>,
  intakeTaskIds: ReadonlySet<string>,
): Promise<number> {
  if (intakeTaskIds.size === 0) return 0;
  const moments = momentsOf(events, eventRows, tasks, before, intakeTaskIds).filter((m) =>
    intakeTaskIds.has(m.task_id),
  );
  if (moments.length === 0) return 0;
  const written = await sql`
    INSERT INTO tracker_updates (key, source_id, issue_id, project_id, task_id, moment, occurrence, event_id, data)
    SELECT i.source_id || ':' || i.issue_id || ':' || m.moment || ':' || m.occurrence,
           i.source_id, i.issue_id, i.project_id, i.task_id, m.moment, m.occurrence, m.event_id, m.data
    FROM jsonb_to_recordset(${JSON.stringify(moments.map((m, n) => ({ ...m, n })))}::jsonb)
      AS m(task_id text, moment text, occurrence text, event_id bigint, data jsonb, n int)
    JOIN intake_items i ON i.project_id = ${projectId} AND i.task_id = m.task_id AND i.cancelled_at IS NULL
    ORDER BY m.n
    ON CONFLICT (key) DO NOTHING`.execute(db);
  const count = Number(written.numAffectedRows ?? 0n);
  if (count > 0) await sql`SELECT pg_notify(${TRACKER_UPDATE_NOTIFY_CHANNEL}, ${projectId})`.execute(db);
  return count;
}

/** Per issue, its pending update with the lowest id (the one to send now), for the given projects or all. */
export async function pendingTrackerUpdateHeads(db: Db, projectIds?: readonly string[]): Promise<string[]> {
  if (projectIds && projectIds.length === 0) return [];
  const rows = await sql<{ id: string }>`
    SELECT DISTINCT ON (source_id, issue_id) id FROM tracker_updates
    WHERE status = 'pending'
      ${projectIds ? sql`AND project_id = ANY(${[...projectIds]}::text[])` : sql``}
    ORDER BY source_id, issue_id, id`.execute(db);
  return rows.rows.map((r) => String(r.id));
}

/** An update, and the pending one of the same issue that must go first (null: none). */
export async function loadTrackerUpdate(
  db: Db,
  id: string,
): Promise<{ update: TrackerUpdateRow; waitingFor: string | null } | null> {
  const update = await db.selectFrom("tracker_updates").selectAll().where("id", "=", id).executeTakeFirst();
  if (!update) return null;
  const earlier = await db
    .selectFrom("tracker_updates")
    .select("id")
    .where("source_id", "=", update.source_id)
    .where("issue_id", "=", update.issue_id)
    .where("status", "=", "pending")
    .where("id", "<", id)
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();
  return { update: update as TrackerUpdateRow, waitingFor: earlier?.id ?? null };
}

/** Counts one attempt of a pending update; its attempt number, or null when no longer pending. */
export async function startTrackerUpdateAttempt(db: Db, id: string): Promise<number | null> {
  const row = await db
    .updateTable("tracker_updates")
    .set((eb) => ({ attempts: eb("attempts", "+", 1), last_attempt_at: sql`now()` }))
    .where("id", "=", id)
    .where("status", "=", "pending")
    .returning("attempts")
    .executeTakeFirst();
  return row?.attempts ?? null;
}

/** Records an attempt's outcome; only a pending update changes. */
export async function recordTrackerUpdateOutcome(
  db: Db,
  id: string,
  outcome: { status: "delivered" | "dead" | "pending"; error: string | null },
): Promise<void> {
  await db
    .updateTable("tracker_updates")
    .set({
      status: outcome.status,
      last_error: outcome.error === null ? null : outcome.error.slice(0, 2000),
      ...(outcome.status === "delivered" ? { delivered_at: sql`now()` } : {}),
    })
    .where("id", "=", id)
    .where("status", "=", "pending")
    .execute();
}

/** Updates newest first (a project's, or all), for operators and tests. */
export async function listTrackerUpdates(
  db: Db,
  filter: { projectId?: string; status?: TrackerUpdateRow["status"]; limit?: number } = {},
): Promise<TrackerUpdateRow[]> {
  let query = db
    .selectFrom("tracker_updates")
    .selectAll()
    .orderBy("id", "desc")
    .limit(filter.limit ?? 100);
  if (filter.projectId !== undefined) query = query.where("project_id", "=", filter.projectId);
  if (filter.status !== undefined) query = query.where("status", "=", filter.status);
  return (await query.execute()) as TrackerUpdateRow[];
}

/** Sends a dead update again (attempts reset, same key: its comment is not posted twice). */
export async function redeliverTrackerUpdate(db: Db, id: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("tracker_updates")
      .set({ status: "pending", attempts: 0, last_error: null, delivered_at: null })
      .where("id", "=", id)
      .where("status", "=", "dead")
      .returning("project_id")
      .executeTakeFirst();
    if (row) await sql`SELECT pg_notify(${TRACKER_UPDATE_NOTIFY_CHANNEL}, ${row.project_id})`.execute(trx);
    return row !== undefined;
  });
}
