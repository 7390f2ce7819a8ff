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
 * rows and how many attempts they made, one grouped query (metrics, read at scrape time).
 */
export async function outboxFigures(
  db: Db,
  table: "notification_deliveries" | "tracker_updates",
): Promise<OutboxFigure[]> {
  const rows = await sql<{ project_id: string; status: string; n: string; attempts: string | null }>`
    SELECT project_id, status, count(*) AS n, sum(attempts) AS attempts
    FROM ${sql.table(table)}
    GROUP BY project_id, status
    ORDER BY project_id, status`.execute(db);
  return rows.rows.map((r) => ({
    projectId: r.project_id,
    status: r.status,
    deliveries: Number(r.n),
    attempts: Number(r.attempts ?? 0),
  }));
}
