import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { LeaseLostError } from "./db-errors.ts";

/**
 * docs/state-machine.md rule 11: one owner per project. A coordinator acquires and renews leases in one
 * statement: it takes every active project that has no lease, whose lease expired, or that
 * it already owns. Row locks on the lease make concurrent replicas agree: never two owners.
 * A crashed owner stops renewing; after `ttlMs` another replica takes over.
 *
 * Its own leases are renewed by an UPDATE of their expiry alone (a no-key update), so a renewal
 * never waits for, nor conflicts with, the claims in flight, which hold their lease FOR KEY
 * SHARE (holdLease). Taking a lease over sets its owner, a key (leases_project_owner), so never
 * while a claim of the previous owner is in flight: such a lease is skipped (SKIP LOCKED) and
 * taken at a later renewal, once the claim has ended. Skipped, not waited for: a claim whose
 * coordinator was cut off mid-transaction holds its lock until Postgres ends the session
 * (the coordinator's idle_in_transaction_session_timeout), and meanwhile this statement
 * renews the replica's own leases on time.
 */
/** Lease defaults: with no `maxProjects` a replica may own every project (Postgres' int4 LIMIT bound). */
export const LEASE_DEFAULTS = Object.freeze({ maxProjects: 2_147_483_647 });

export async function acquireLeases(
  db: Db,
  owner: string,
  ttlMs: number,
  maxProjects?: number,
): Promise<string[]> {
  const limit = maxProjects ?? LEASE_DEFAULTS.maxProjects;
  const expiry = sql`now() + make_interval(secs => ${ttlMs / 1000})`;
  const rows = await sql<{ project_id: string }>`
    WITH candidates AS (
      SELECT p.id, coalesce(l.owner = ${owner}, false) AS mine, l.project_id IS NOT NULL AS leased
      FROM projects p
      LEFT JOIN leases l ON l.project_id = p.id
      WHERE p.status = 'active' AND (l.project_id IS NULL OR l.owner = ${owner} OR l.expires_at < now())
      ORDER BY (l.owner = ${owner}) DESC NULLS LAST, p.id
      LIMIT ${limit}
    ), lapsed AS (
      SELECT project_id FROM leases
      WHERE project_id IN (SELECT id FROM candidates WHERE NOT mine AND leased) AND expires_at < now()
      FOR UPDATE SKIP LOCKED
    ), renewed AS (
      UPDATE leases SET expires_at = ${expiry}
      WHERE owner = ${owner} AND project_id IN (SELECT id FROM candidates WHERE mine)
      RETURNING project_id
    ), taken AS (
      INSERT INTO leases (project_id, owner, expires_at)
      SELECT id, ${owner}, ${expiry} FROM candidates
      WHERE NOT mine AND (NOT leased OR id IN (SELECT project_id FROM lapsed))
      ON CONFLICT (project_id) DO UPDATE
        SET owner = EXCLUDED.owner,
            expires_at = EXCLUDED.expires_at,
            acquired_at = CASE WHEN leases.owner = EXCLUDED.owner THEN leases.acquired_at ELSE now() END
        WHERE leases.owner = EXCLUDED.owner OR leases.expires_at < now()
      RETURNING project_id
    )
    SELECT project_id FROM renewed UNION ALL SELECT project_id FROM taken`.execute(db);
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

/** A lease its owner's last renewal did not keep, with what became of its project. */
export interface DroppedLease {
  projectId: string;
  /** The project's name and status; null when the project no longer exists. */
  name: string | null;
  status: string | null;
  /** The replica that holds the lease now; null when nobody does. */
  holder: string | null;
}

/**
 * Settles the leases `owner` held on `projectIds` that its renewal (acquireLeases) did not keep.
 * A project that left `active` (paused, stopped, completed) is not lost but done with: its lease
 * is deleted here, so a later start is leased at once by whichever replica hears of it. Each
 * project comes back with its status and the lease's holder now, so the caller tells a release
 * from a loss (another replica took an expired lease).
 */
export async function settleDroppedLeases(
  db: Db,
  owner: string,
  projectIds: readonly string[],
): Promise<DroppedLease[]> {
  if (projectIds.length === 0) return [];
  const ids = [...projectIds];
  const rows = await sql<{
    project_id: string;
    name: string | null;
    status: string | null;
    holder: string | null;
  }>`
    WITH released AS (
      DELETE FROM leases l USING projects p
      WHERE l.project_id = p.id AND l.owner = ${owner} AND l.project_id = ANY(${ids}::text[])
        AND p.status <> 'active'
      RETURNING l.project_id
    )
    SELECT ids.id AS project_id, p.name, p.status, l.owner AS holder
    FROM unnest(${ids}::text[]) AS ids(id)
    LEFT JOIN projects p ON p.id = ids.id
    LEFT JOIN leases l ON l.project_id = ids.id AND l.project_id NOT IN (SELECT project_id FROM released)
    ORDER BY ids.id`.execute(db);
  return rows.rows.map((r) => ({
    projectId: r.project_id,
    name: r.name,
    status: r.status,
    holder: r.holder,
  }));
}

export async function leaseOwners(db: Db): Promise<{ projectId: string; owner: string; expiresAt: Date }[]> {
  const rows = await db.selectFrom("leases").selectAll().where("expires_at", ">", sql<Date>`now()`).execute();
  return rows.map((r) => ({ projectId: r.project_id, owner: r.owner, expiresAt: r.expires_at }));
}

/**
 * The claim's lease check, inside its transaction: `owner` must hold an unexpired lease on the
 * project (LeaseLostError otherwise), and keeps it until the transaction ends. FOR KEY SHARE: the owner's own renewal (a no-key update of the
 * expiry) neither waits for nor conflicts with it, while a takeover by another replica (a new
 * owner, a key of leases_project_owner) skips the lease until the claim has ended, and a release
 * (a delete) waits for it.
 */
export async function holdLease(db: Db, projectId: string, owner: string): Promise<void> {
  const lease = await db
    .selectFrom("leases")
    .select("owner")
    .where("project_id", "=", projectId)
    .where("owner", "=", owner)
    .where("expires_at", ">", sql<Date>`now()`)
    .forKeyShare()
    .executeTakeFirst();
  if (!lease) throw new LeaseLostError(projectId, owner);
}
