import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createProject,
  createScratchDatabase,
  type Db,
  recordTrackerUpdateOutcome,
  redeliverTrackerUpdate,
  type ScratchDatabase,
  startTrackerUpdateAttempt,
  trackerUpdateFigures,
} from "../src/index.ts";

/**
 * The outboxes' metrics are read at every scrape: with a long history (20,000 tracker updates
 * delivered, 18 still to send) they read the rows still to send through their partial index and the delivered
 * ones' totals (migration 0026), not the whole table, and the totals follow every change a row
 * makes into or out of `delivered`.
 */

let scratch: ScratchDatabase;

/** The figures as the whole table gives them (what the metrics read before migration 0026). */
async function scanned(
  db: Db,
): Promise<{ projectId: string; status: string; deliveries: number; attempts: number }[]> {
  const rows = await sql<{ project_id: string; status: string; n: string; attempts: string }>`
    SELECT project_id, status, count(*) AS n, sum(attempts) AS attempts FROM tracker_updates
    GROUP BY project_id, status ORDER BY project_id, status`.execute(db);
  return rows.rows.map((r) => ({
    projectId: r.project_id,
    status: r.status,
    deliveries: Number(r.n),
    attempts: Number(r.attempts),
  }));
}

async function insertUpdates(
  sourceId: string,
  projectId: string,
  status: string,
  count: number,
): Promise<void> {
  await sql`INSERT INTO tracker_updates (key, source_id, issue_id, project_id, task_id, moment, occurrence, status, attempts)
    SELECT ${`${sourceId}-${status}-`} || n, ${sourceId}, 'issue-' || (n % 300), ${projectId}, 'T-' || n,
      'done', '1', ${status}, 1 + n % 3
    FROM generate_series(1, ${count}) AS n`.execute(scratch.db);
}

beforeAll(async () => {
  scratch = await createScratchDatabase();
  for (const [projectId, sourceId, delivered] of [
    ["alpha", "src-a", 10_000],
    ["beta", "src-b", 9_950],
    ["gamma", "src-c", 50],
  ] as const) {
    await createProject(scratch.db, { id: projectId, repo: "/tmp/none", runnerConfig: {} });
    await sql`INSERT INTO intake_sources (id, project_id, kind, query, token_env, created_by)
      VALUES (${sourceId}, ${projectId}, 'github', '{}', 'TOKEN', 'test')`.execute(scratch.db);
    await insertUpdates(sourceId, projectId, "delivered", delivered);
    await insertUpdates(sourceId, projectId, "pending", 4);
    await insertUpdates(sourceId, projectId, "dead", 2);
  }
  await sql`ANALYZE tracker_updates`.execute(scratch.db);
});

afterAll(async () => {
  await scratch?.drop();
});

describe("tracker update figures", () => {
  it("are what the whole table says", async () => {
    const figures = await trackerUpdateFigures(scratch.db);
    expect(figures).toEqual(await scanned(scratch.db));
    expect(figures.find((f) => f.projectId === "alpha" && f.status === "delivered")?.deliveries).toBe(10_000);
  });

  it("read the 18 rows still to send, not the 20,000 delivered", async () => {
    const touched = await scratch.db.transaction().execute(async (trx) => {
      // What this backend read of the table (counted, not sampled), before and after the figures.
      const read = async () => {
        const stats = await sql<{ seq_scan: string; seq_tup_read: string; idx_tup_fetch: string }>`
          SELECT seq_scan, seq_tup_read, idx_tup_fetch FROM pg_stat_xact_user_tables
          WHERE relname = 'tracker_updates'`.execute(trx);
        const row = stats.rows[0];
        return [Number(row?.seq_scan), Number(row?.seq_tup_read), Number(row?.idx_tup_fetch)];
      };
      const before = await read();
      await trackerUpdateFigures(trx);
      const after = await read();
      return after.map((n, i) => n - (before[i] ?? 0));
    });
    const [seqScans, seqRowsRead, indexRowsFetched] = touched;
    expect(seqScans).toBe(0);
    expect(seqRowsRead).toBe(0);
    expect(indexRowsFetched).toBeLessThanOrEqual(18);
  });

  it("follow a delivery, a redelivery and a source's removal", async () => {
    const pending = await sql<{ id: string }>`SELECT id FROM tracker_updates
      WHERE project_id = 'alpha' AND status = 'pending' ORDER BY id LIMIT 1`.execute(scratch.db);
    const id = pending.rows[0]?.id as string;
    expect(await startTrackerUpdateAttempt(scratch.db, id)).not.toBeNull();
    await recordTrackerUpdateOutcome(scratch.db, id, { status: "delivered", error: null });
    expect(await trackerUpdateFigures(scratch.db)).toEqual(await scanned(scratch.db));

    const dead = await sql<{ id: string }>`SELECT id FROM tracker_updates
      WHERE project_id = 'alpha' AND status = 'dead' ORDER BY id LIMIT 1`.execute(scratch.db);
    expect(await redeliverTrackerUpdate(scratch.db, dead.rows[0]?.id as string)).toBe(true);
    // A delivered row sent again (a notification's redelivery does so) leaves the totals.
    await sql`UPDATE tracker_updates SET status = 'pending', attempts = 0 WHERE id = (
      SELECT id FROM tracker_updates WHERE project_id = 'beta' AND status = 'delivered' ORDER BY id LIMIT 1)`.execute(
      scratch.db,
    );
    expect(await trackerUpdateFigures(scratch.db)).toEqual(await scanned(scratch.db));

    await sql`DELETE FROM intake_sources WHERE id = 'src-c'`.execute(scratch.db);
    const figures = await trackerUpdateFigures(scratch.db);
    expect(figures).toEqual(await scanned(scratch.db));
    expect(figures.map((f) => f.projectId)).not.toContain("gamma");
  });
});
