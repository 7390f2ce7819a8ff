import type { Decision } from "@overseer/domain";
import type { Db } from "./connection.ts";
import { decisionFromRow } from "./row-mappers.ts";

export async function listDecisions(
  db: Db,
  projectId: string,
  status?: "pending" | "resolved",
): Promise<Decision[]> {
  let q = db.selectFrom("decisions").selectAll().where("project_id", "=", projectId).orderBy("created_at");
  if (status) q = q.where("status", "=", status);
  return (await q.execute()).map(decisionFromRow);
}

export async function getDecision(db: Db, projectId: string, id: string): Promise<Decision | undefined> {
  const row = await db
    .selectFrom("decisions")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? decisionFromRow(row) : undefined;
}

export async function countPendingDecisions(db: Db): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom("decisions")
    .select(["project_id", (eb) => eb.fn.countAll<string>().as("n")])
    .where("status", "=", "pending")
    .groupBy("project_id")
    .execute();
  return Object.fromEntries(rows.map((r) => [r.project_id, Number(r.n)]));
}

export async function listIncidents(db: Db, projectId: string, limit = 100) {
  return db
    .selectFrom("incidents")
    .selectAll()
    .where("project_id", "=", projectId)
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}
