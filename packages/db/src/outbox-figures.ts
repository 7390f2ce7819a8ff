import { sql } from "kysely";
import type { Db } from "./connection.ts";

/** Rows of one status in one project of an outbox table, and the attempts they made. */
export interface OutboxFigure {
  readonly projectId: string;
  readonly status: string;
  readonly deliveries: number;
  readonly attempts: number;
}

/**
 * Per project and status of an outbox table (notification deliveries, tracker updates): how many
 * rows and how many attempts they made (metrics, read at scrape time). What it reads grows with
 * what is still to send, not with what was ever sent: the pending and dead rows through their
 * partial index, the delivered ones from the totals a trigger keeps (migration 0026).
 */
export async function outboxFigures(
  db: Db,
  table: "notification_deliveries" | "tracker_updates",
): Promise<OutboxFigure[]> {
  const rows = await sql<{ project_id: string; status: string; n: string; attempts: string | null }>`
    SELECT project_id, status, count(*) AS n, sum(attempts) AS attempts
    FROM ${sql.table(table)} WHERE status <> 'delivered'
    GROUP BY project_id, status
    UNION ALL
    SELECT project_id, 'delivered', deliveries, attempts
    FROM outbox_delivered_totals WHERE outbox = ${table} AND deliveries > 0
    ORDER BY project_id, status`.execute(db);
  return rows.rows.map((r) => ({
    projectId: r.project_id,
    status: r.status,
    deliveries: Number(r.n),
    attempts: Number(r.attempts ?? 0),
  }));
}
