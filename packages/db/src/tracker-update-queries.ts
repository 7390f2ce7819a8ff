/**
 * Operator reads of intake and two-way status (README "Intake and notifications"): pages of
 * tracker updates with their source's kind for the gateway's routes and dashboard, a source's
 * webhook deliveries, and the figures `/metrics` reads at scrape time (grouped counts, one query
 * each, no per-project work).
 */
import type { Db } from "./connection.ts";
import { type OutboxFigure, outboxFigures } from "./outbox-figures.ts";
import type { TrackerUpdateRow } from "./tracker-update-repository.ts";

export type TrackerUpdateListRow = TrackerUpdateRow & { readonly kind: string | null };

export interface TrackerUpdateListFilter {
  readonly projectId?: string | undefined;
  readonly sourceId?: string | undefined;
  readonly status?: TrackerUpdateRow["status"] | undefined;
  /** Only updates with a lower id (the next, older page). */
  readonly before?: string | undefined;
  readonly limit: number;
}

function updatesWithKind(db: Db) {
  return db
    .selectFrom("tracker_updates as u")
    .leftJoin("intake_sources as s", "s.id", "u.source_id")
    .selectAll("u")
    .select("s.kind");
}

/** Tracker updates newest first, with their source's tracker kind. */
export async function listTrackerUpdatePage(
  db: Db,
  filter: TrackerUpdateListFilter,
): Promise<TrackerUpdateListRow[]> {
  let q = updatesWithKind(db).orderBy("u.id", "desc").limit(filter.limit);
  if (filter.projectId) q = q.where("u.project_id", "=", filter.projectId);
  if (filter.sourceId) q = q.where("u.source_id", "=", filter.sourceId);
  if (filter.status) q = q.where("u.status", "=", filter.status);
  if (filter.before) q = q.where("u.id", "<", filter.before);
  return (await q.execute()) as TrackerUpdateListRow[];
}

/** One tracker update with its source's kind, or undefined. */
export async function getTrackerUpdate(db: Db, id: string): Promise<TrackerUpdateListRow | undefined> {
  return (await updatesWithKind(db).where("u.id", "=", id).executeTakeFirst()) as
    | TrackerUpdateListRow
    | undefined;
}

/** Per source: how many verified webhook deliveries were stored, and when the last came. */
export async function intakeWebhookCounts(
  db: Db,
  sourceIds: readonly string[],
): Promise<Map<string, { received: number; lastAt: Date | null }>> {
  if (sourceIds.length === 0) return new Map();
  const rows = await db
    .selectFrom("intake_webhook_deliveries")
    .select([
      "source_id",
      (eb) => eb.fn.countAll<string>().as("n"),
      (eb) => eb.fn.max("received_at").as("last"),
    ])
    .where("source_id", "in", [...sourceIds])
    .groupBy("source_id")
    .execute();
  return new Map(
    rows.map((r) => [
      r.source_id,
      { received: Number(r.n), lastAt: r.last === null ? null : new Date(r.last) },
    ]),
  );
}

/** Per project and status: how many tracker updates, and how many attempts they made (metrics). */
export async function trackerUpdateFigures(db: Db): Promise<OutboxFigure[]> {
  return outboxFigures(db, "tracker_updates");
}

/** Per project and tracker kind: issues intake turned into tasks or missions, and webhook deliveries stored (metrics). */
export async function intakeFigures(
  db: Db,
): Promise<{ projectId: string; kind: string; items: number; webhooks: number }[]> {
  const [items, webhooks] = await Promise.all([
    db
      .selectFrom("intake_items as i")
      .innerJoin("intake_sources as s", "s.id", "i.source_id")
      .select(["i.project_id", "s.kind", (eb) => eb.fn.countAll<string>().as("n")])
      .where("i.task_id", "is not", null)
      .groupBy(["i.project_id", "s.kind"])
      .execute(),
    db
      .selectFrom("intake_webhook_deliveries as w")
      .innerJoin("intake_sources as s", "s.id", "w.source_id")
      .select(["s.project_id", "s.kind", (eb) => eb.fn.countAll<string>().as("n")])
      .groupBy(["s.project_id", "s.kind"])
      .execute(),
  ]);
  const out = new Map<string, { projectId: string; kind: string; items: number; webhooks: number }>();
  const at = (projectId: string, kind: string) => {
    const key = `${projectId}\u0000${kind}`;
    let figure = out.get(key);
    if (!figure) {
      figure = { projectId, kind, items: 0, webhooks: 0 };
      out.set(key, figure);
    }
    return figure;
  };
  for (const r of items) at(r.project_id, r.kind).items = Number(r.n);
  for (const r of webhooks) at(r.project_id, r.kind).webhooks = Number(r.n);
  return [...out.values()];
}
