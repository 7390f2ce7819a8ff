import { type Kysely, sql } from "kysely";

/**
 * Missions: a project may carry a mission (objective, round, round limit, approved evidence)
 * and end `completed`; planning tasks are tasks of kind `plan` whose last proposal (a task
 * graph or completion evidence) is kept for their review.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE projects ADD COLUMN mission jsonb`.execute(db);
  await sql`ALTER TABLE projects DROP CONSTRAINT projects_status_check`.execute(db);
  await sql`
    ALTER TABLE projects ADD CONSTRAINT projects_status_check
    CHECK (status IN ('active','paused','stopped','completed'))`.execute(db);
  await sql`ALTER TABLE tasks ADD COLUMN proposal jsonb`.execute(db);
  await sql`ALTER TABLE tasks DROP CONSTRAINT tasks_kind_check`.execute(db);
  await sql`ALTER TABLE tasks ADD CONSTRAINT tasks_kind_check CHECK (kind IN ('work','resolver','plan'))`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM tasks WHERE kind = 'plan'`.execute(db);
  await sql`ALTER TABLE tasks DROP CONSTRAINT tasks_kind_check`.execute(db);
  await sql`ALTER TABLE tasks ADD CONSTRAINT tasks_kind_check CHECK (kind IN ('work','resolver'))`.execute(
    db,
  );
  await sql`ALTER TABLE tasks DROP COLUMN proposal`.execute(db);
  await sql`UPDATE projects SET status = 'paused' WHERE status = 'completed'`.execute(db);
  await sql`ALTER TABLE projects DROP CONSTRAINT projects_status_check`.execute(db);
  await sql`
    ALTER TABLE projects ADD CONSTRAINT projects_status_check
    CHECK (status IN ('active','paused','stopped'))`.execute(db);
  await sql`ALTER TABLE projects DROP COLUMN mission`.execute(db);
}
