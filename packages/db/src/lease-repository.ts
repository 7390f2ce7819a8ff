import { sql } from "kysely";
import type { Db } from "./connection.ts";

/**
 * docs/state-machine.md rule 11: one owner per project. A coordinator acquires and renews leases in one
 * statement: it takes every active project that has no lease, whose lease expired, or that
 * it already owns. Row locks on the lease make concurrent replicas agree: never two owners.
 * A crashed owner stops renewing; after `ttlMs` another replica takes over.
 */
export async function acquireLeases(
  db: Db,
  owner: string,
  ttlMs: number,
  maxProjects?: number,
): Promise<string[]> {
  const limit = maxProjects ?? 2_147_483_647;
  const rows = await sql<{ project_id: string }>`
    INSERT INTO leases (project_id, owner, expires_at)
    SELECT p.id, ${owner}, now() + make_interval(secs => ${ttlMs / 1000})
    FROM projects p
    LEFT JOIN leases l ON l.project_id = p.id
    WHERE p.status = 'active' AND (l.project_id IS NULL OR l.owner = ${owner} OR l.expires_at < now())
    ORDER BY (l.owner = ${owner}) DESC NULLS LAST, p.id
    LIMIT ${limit}
    ON CONFLICT (project_id) DO UPDATE
      SET owner = EXCLUDED.owner,
          expires_at = EXCLUDED.expires_at,
          acquired_at = CASE WHEN leases.owner = EXCLUDED.owner THEN leases.acquired_at ELSE now() END
      WHERE leases.owner = EXCLUDED.owner OR leases.expires_at < now()
    RETURNING project_id`.execute(db);
  return rows.rows.map((r) => r.project_id).sort();
}

/** Gives up every lease (graceful shutdown), so another replica takes over at once. */
export async function releaseLeases(db: Db, owner: string, projectIds?: readonly string[]): Promise<void> {
  let q = db.deleteFrom("leases").where("owner", "=", owner);
  if (projectIds) {
    if (projectIds.length === 0) return;
    q = q.where("project_id", "in", [...projectIds]);
  }
  await q.execute();
}

export async function leaseOwners(db: Db): Promise<{ projectId: string; owner: string; expiresAt: Date }[]> {
  const rows = await db.selectFrom("leases").selectAll().where("expires_at", ">", sql<Date>`now()`).execute();
  return rows.map((r) => ({ projectId: r.project_id, owner: r.owner, expiresAt: r.expires_at }));
}
