import { type Kysely, sql } from "kysely";

/**
 * The outboxes' metrics (notification deliveries, tracker updates: rows and attempts by project
 * and status, read at every scrape) grouped the whole table, delivered rows included, so a scrape
 * cost grew with every row ever sent. The delivered rows' figures are now counters kept by a
 * trigger in the transaction that moves a row into or out of `delivered` (or deletes one), and
 * the pending and dead rows, the few that change, are read through a partial index of them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE outbox_delivered_totals (
    outbox text NOT NULL,
    project_id text NOT NULL,
    deliveries bigint NOT NULL DEFAULT 0,
    attempts bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (outbox, project_id)
  )`.execute(db);
  // Each row's part in the totals: one delivery and its attempts while it is delivered.
  await sql`CREATE FUNCTION outbox_delivered_totals_count() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' AND OLD.status = 'delivered' THEN
        UPDATE outbox_delivered_totals
          SET deliveries = deliveries - 1, attempts = attempts - OLD.attempts
          WHERE outbox = TG_TABLE_NAME AND project_id = OLD.project_id;
      END IF;
      IF TG_OP <> 'DELETE' AND NEW.status = 'delivered' THEN
        INSERT INTO outbox_delivered_totals AS t (outbox, project_id, deliveries, attempts)
          VALUES (TG_TABLE_NAME, NEW.project_id, 1, NEW.attempts)
          ON CONFLICT (outbox, project_id) DO UPDATE
          SET deliveries = t.deliveries + 1, attempts = t.attempts + EXCLUDED.attempts;
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  for (const table of ["notification_deliveries", "tracker_updates"]) {
    // The trigger first: its lock holds the table's writers until the migration commits, so the
    // totals counted next miss no delivery. Only a change that touches a delivered row (before
    // or after) changes them.
    await sql`CREATE TRIGGER ${sql.raw(`${table}_delivered_totals`)}
      AFTER INSERT OR UPDATE OF status, attempts, project_id OR DELETE ON ${sql.table(table)}
      FOR EACH ROW EXECUTE FUNCTION outbox_delivered_totals_count()`.execute(db);
    await sql`INSERT INTO outbox_delivered_totals (outbox, project_id, deliveries, attempts)
      SELECT ${table}, project_id, count(*), coalesce(sum(attempts), 0)
      FROM ${sql.table(table)} WHERE status = 'delivered' GROUP BY project_id`.execute(db);
    await sql`CREATE INDEX ${sql.raw(`${table}_undelivered`)}
      ON ${sql.table(table)} (project_id, status) INCLUDE (attempts)
      WHERE status <> 'delivered'`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ["notification_deliveries", "tracker_updates"]) {
    await sql`DROP TRIGGER IF EXISTS ${sql.raw(`${table}_delivered_totals`)} ON ${sql.table(table)}`.execute(
      db,
    );
    await sql`DROP INDEX IF EXISTS ${sql.raw(`${table}_undelivered`)}`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS outbox_delivered_totals_count()`.execute(db);
  await sql`DROP TABLE IF EXISTS outbox_delivered_totals`.execute(db);
}
