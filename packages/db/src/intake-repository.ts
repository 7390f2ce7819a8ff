/**
 * Tracker intake's statements (migration 0022): sources, the items they took (idempotent by
 * source and issue id), comment cursors and verified webhook deliveries (stored once).
 */

import { TERMINAL_TASK_STATUSES } from "@overseer/domain";
import type { Selectable } from "kysely";
import { sql } from "kysely";
import { type Db, json } from "./connection.ts";
import type { IntakeSourcesTable } from "./intake-schema.ts";

export type IntakeSourceRow = Selectable<IntakeSourcesTable>;

export interface NewIntakeSource {
  readonly id: string;
  readonly projectId: string;
  readonly kind: IntakeSourceRow["kind"];
  readonly baseUrl: string | null;
  readonly query: Record<string, unknown>;
  readonly config: Record<string, unknown>;
  readonly tokenEnv: string;
  readonly webhookSecretEnv: string | null;
  readonly createdBy: string;
}

export async function createIntakeSource(db: Db, source: NewIntakeSource): Promise<IntakeSourceRow> {
  return db
    .insertInto("intake_sources")
    .values({
      id: source.id,
      project_id: source.projectId,
      kind: source.kind,
      base_url: source.baseUrl,
      query: json(source.query),
      config: json(source.config),
      token_env: source.tokenEnv,
      webhook_secret_env: source.webhookSecretEnv,
      created_by: source.createdBy,
      last_error: null,
      polled_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function getIntakeSource(db: Db, id: string): Promise<IntakeSourceRow | null> {
  return (await db.selectFrom("intake_sources").selectAll().where("id", "=", id).executeTakeFirst()) ?? null;
}

/** Sources of one project, or of all (enabled ones only when asked). */
export async function listIntakeSources(
  db: Db,
  filter: { projectId?: string; enabledOnly?: boolean } = {},
): Promise<IntakeSourceRow[]> {
  let query = db.selectFrom("intake_sources").selectAll().orderBy("created_at").orderBy("id");
  if (filter.projectId !== undefined) query = query.where("project_id", "=", filter.projectId);
  if (filter.enabledOnly) query = query.where("enabled", "=", true);
  return query.execute();
}

export async function removeIntakeSource(db: Db, id: string): Promise<boolean> {
  const removed = await db.deleteFrom("intake_sources").where("id", "=", id).executeTakeFirst();
  return Number(removed.numDeletedRows) > 0;
}

/** After a poll: where the next one resumes, and the error it met (null: none). */
export async function recordIntakePoll(
  db: Db,
  id: string,
  outcome: { polledAt: string | null; error: string | null },
): Promise<void> {
  await db
    .updateTable("intake_sources")
    .set((eb) => ({
      polled_at: outcome.polledAt === null ? eb.ref("polled_at") : outcome.polledAt,
      last_error: outcome.error,
    }))
    .where("id", "=", id)
    .execute();
}

export interface IntakeItemRow {
  readonly source_id: string;
  readonly issue_id: string;
  readonly issue_key: string;
  readonly project_id: string;
  readonly task_id: string | null;
  readonly comment_cursor: string | null;
  readonly cancelled_at: Date | null;
  /** The task's status, null when it has none (or it is gone). */
  readonly task_status: string | null;
  /** The pending "Needs you" card of the task, or of the resolver it is blocked by. */
  readonly pending_decision_id: string | null;
}

/** One item with its task's status and pending card; null when intake never saw the issue. */
export async function getIntakeItem(
  db: Db,
  sourceId: string,
  issueId: string,
): Promise<IntakeItemRow | null> {
  const result = await sql<IntakeItemRow>`
    SELECT i.source_id, i.issue_id, i.issue_key, i.project_id, i.task_id, i.comment_cursor, i.cancelled_at,
           t.status AS task_status,
           (SELECT d.id FROM decisions d
             WHERE d.project_id = i.project_id AND d.status = 'pending'
               AND (d.item_id = i.task_id OR d.item_id = t.blocked_by)
             ORDER BY d.id LIMIT 1) AS pending_decision_id
    FROM intake_items i
    LEFT JOIN tasks t ON t.project_id = i.project_id AND t.id = i.task_id
    WHERE i.source_id = ${sourceId} AND i.issue_id = ${issueId}`.execute(db);
  return result.rows[0] ?? null;
}

/** The key of the tracker issue a task came from (`acme/app#12`, `ENG-12`), null for any other task. */
export async function intakeIssueKeyOfTask(
  db: Db,
  projectId: string,
  taskId: string,
): Promise<string | null> {
  const row = await db
    .selectFrom("intake_items")
    .select("issue_key")
    .where("project_id", "=", projectId)
    .where("task_id", "=", taskId)
    .where("cancelled_at", "is", null)
    .executeTakeFirst();
  return row?.issue_key ?? null;
}

/** Issue id → task id of every issue the source turned into a task (blockers become prerequisites). */
export async function intakeTaskIds(db: Db, sourceId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom("intake_items")
    .select(["issue_id", "task_id"])
    .where("source_id", "=", sourceId)
    .where("task_id", "is not", null)
    .execute();
  return new Map(rows.map((r) => [r.issue_id, r.task_id as string]));
}

/** The issues of a source whose task is still live (a poll re-reads them: a closed issue is not listed as open). */
export async function liveIntakeIssueIds(db: Db, sourceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("intake_items as i")
    .innerJoin("tasks as t", (join) =>
      join.onRef("t.project_id", "=", "i.project_id").onRef("t.id", "=", "i.task_id"),
    )
    .select("i.issue_id")
    .where("i.source_id", "=", sourceId)
    .where("i.cancelled_at", "is", null)
    .where("t.status", "not in", [...TERMINAL_TASK_STATUSES])
    .execute();
  return rows.map((r) => r.issue_id);
}

/**
 * Records that an issue became `taskId` (idempotent: a second record of the same issue keeps
 * the first task). The comment cursor starts where the caller read up to (comments before the
 * task existed are its body, not answers).
 */
export async function recordIntakeItem(
  db: Db,
  item: {
    sourceId: string;
    issueId: string;
    issueKey: string;
    projectId: string;
    taskId: string;
    commentCursor: string | null;
  },
): Promise<void> {
  await db
    .insertInto("intake_items")
    .values({
      source_id: item.sourceId,
      issue_id: item.issueId,
      issue_key: item.issueKey,
      project_id: item.projectId,
      task_id: item.taskId,
      comment_cursor: item.commentCursor,
      cancelled_at: null,
    })
    .onConflict((oc) => oc.columns(["source_id", "issue_id"]).doNothing())
    .execute();
}

export async function setIntakeCommentCursor(
  db: Db,
  sourceId: string,
  issueId: string,
  cursor: string | null,
): Promise<void> {
  await db
    .updateTable("intake_items")
    .set({ comment_cursor: cursor, updated_at: sql`now()` })
    .where("source_id", "=", sourceId)
    .where("issue_id", "=", issueId)
    .execute();
}

export async function markIntakeItemCancelled(db: Db, sourceId: string, issueId: string): Promise<void> {
  await db
    .updateTable("intake_items")
    .set({ cancelled_at: sql`coalesce(cancelled_at, now())`, updated_at: sql`now()` })
    .where("source_id", "=", sourceId)
    .where("issue_id", "=", issueId)
    .execute();
}

/** Stores a verified webhook delivery; false when it was stored before (a redelivery). */
export async function recordIntakeDelivery(
  db: Db,
  delivery: { sourceId: string; deliveryId: string; issueId: string; what: "issue" | "comment" },
): Promise<boolean> {
  const inserted = await db
    .insertInto("intake_webhook_deliveries")
    .values({
      source_id: delivery.sourceId,
      delivery_id: delivery.deliveryId,
      issue_id: delivery.issueId,
      what: delivery.what,
    })
    .onConflict((oc) => oc.columns(["source_id", "delivery_id"]).doNothing())
    .returning("delivery_id")
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Source id → how many issues it turned into tasks (a source that took none is absent). */
export async function intakeItemCounts(db: Db, sourceIds: readonly string[]): Promise<Map<string, number>> {
  if (sourceIds.length === 0) return new Map();
  const rows = await db
    .selectFrom("intake_items")
    .select(["source_id", (eb) => eb.fn.countAll<string>().as("taken")])
    .where("source_id", "in", [...sourceIds])
    .where("task_id", "is not", null)
    .groupBy("source_id")
    .execute();
  return new Map(rows.map((r) => [r.source_id, Number(r.taken)]));
}
