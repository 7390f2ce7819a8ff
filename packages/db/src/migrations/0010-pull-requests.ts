import { type Kysely, sql } from "kysely";

/**
 * Landing through pull requests (docs/state-machine.md rules 14–19): a task may be `pr_open`
 * (approved, its pull request open; `done` only once merged), and its pull request is one row
 * of `pull_requests` (domain `TaskPullRequest`). Beside what the state machine records, the
 * forge runner keeps its conditional-read validators (ETags) and when it last polled, and
 * counts the forge API calls it made for the task.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE tasks DROP CONSTRAINT tasks_status_check`.execute(db);
  await sql`
    ALTER TABLE tasks ADD CONSTRAINT tasks_status_check
    CHECK (status IN ('todo','in_progress','review','pr_open','done','blocked','awaiting_input','cancelled'))`.execute(
    db,
  );
  await sql`CREATE TABLE pull_requests (
    project_id text NOT NULL,
    task_id text NOT NULL,
    number integer,
    url text,
    branch text NOT NULL,
    base text NOT NULL,
    head_sha text NOT NULL,
    status text NOT NULL CHECK (status IN ('opening','open','merged','closed')),
    checks text NOT NULL DEFAULT 'pending' CHECK (checks IN ('pending','success','failure')),
    review text NOT NULL DEFAULT 'none' CHECK (review IN ('none','approved','changes_requested')),
    approvals integer NOT NULL DEFAULT 0 CHECK (approvals >= 0),
    ci_failures integer NOT NULL DEFAULT 0 CHECK (ci_failures >= 0),
    merge_commit_sha text,
    merged_by text,
    etag_pull text,
    etag_checks text,
    etag_reviews text,
    polled_at timestamptz,
    api_calls integer NOT NULL DEFAULT 0 CHECK (api_calls >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, task_id),
    UNIQUE (project_id, branch),
    FOREIGN KEY (project_id, task_id) REFERENCES tasks(project_id, id) ON DELETE CASCADE
  )`.execute(db);
  // The forge runner polls open pull requests only: cost grows with what is open, not with history.
  await sql`CREATE INDEX pull_requests_open ON pull_requests (project_id, polled_at)
    WHERE status IN ('opening','open')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS pull_requests`.execute(db);
  await sql`UPDATE tasks SET status = 'review' WHERE status = 'pr_open'`.execute(db);
  await sql`ALTER TABLE tasks DROP CONSTRAINT tasks_status_check`.execute(db);
  await sql`
    ALTER TABLE tasks ADD CONSTRAINT tasks_status_check
    CHECK (status IN ('todo','in_progress','review','done','blocked','awaiting_input','cancelled'))`.execute(
    db,
  );
}
