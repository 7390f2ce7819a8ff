import { type Kysely, sql } from "kysely";

/**
 * Durable state. Postgres is the single source of truth: everything in Redis (queues,
 * live logs, heartbeats) can be rebuilt from these tables.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE projects (
      id text PRIMARY KEY,
      name text NOT NULL,
      repo text NOT NULL,
      branch text NOT NULL DEFAULT 'main',
      objective text NOT NULL DEFAULT '',
      runner_config jsonb NOT NULL DEFAULT '{}'::jsonb,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','paused','stopped')),
      status_reason text,
      continuous boolean NOT NULL DEFAULT false,
      concurrency integer NOT NULL DEFAULT 1 CHECK (concurrency > 0),
      sessions_limit integer CHECK (sessions_limit IS NULL OR sessions_limit >= 0),
      sessions_used integer NOT NULL DEFAULT 0,
      stage text,
      budget_usd double precision,
      cost_usd double precision NOT NULL DEFAULT 0,
      tokens_in bigint NOT NULL DEFAULT 0,
      tokens_out bigint NOT NULL DEFAULT 0,
      version integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE tasks (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      id text NOT NULL,
      seq bigserial NOT NULL,
      stage text NOT NULL,
      title text NOT NULL,
      body text NOT NULL DEFAULT '',
      role text NOT NULL DEFAULT 'general',
      scope text[] NOT NULL DEFAULT ARRAY['**'],
      acceptance text[] NOT NULL DEFAULT '{}',
      priority integer NOT NULL DEFAULT 0,
      kind text NOT NULL DEFAULT 'work' CHECK (kind IN ('work','resolver')),
      parent_id text,
      root_id text,
      depth integer NOT NULL DEFAULT 0,
      status text NOT NULL DEFAULT 'todo'
        CHECK (status IN ('todo','in_progress','review','done','blocked','awaiting_input','cancelled')),
      status_reason text,
      awaiting_reason text,
      blocked_by text,
      return_to text,
      retired_agent_ids text[] NOT NULL DEFAULT '{}',
      feedback text,
      answers jsonb NOT NULL DEFAULT '[]'::jsonb,
      executor_agent_id text,
      branch_head text,
      failures integer NOT NULL DEFAULT 0,
      not_before timestamptz,
      version integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, id)
    )`.execute(db);
  await sql`CREATE INDEX tasks_status_idx ON tasks (project_id, status)`.execute(db);

  await sql`
    CREATE TABLE task_dependencies (
      project_id text NOT NULL,
      task_id text NOT NULL,
      depends_on text NOT NULL,
      PRIMARY KEY (project_id, task_id, depends_on),
      FOREIGN KEY (project_id, task_id) REFERENCES tasks(project_id, id) ON DELETE CASCADE,
      FOREIGN KEY (project_id, depends_on) REFERENCES tasks(project_id, id) ON DELETE CASCADE
    )`.execute(db);

  await sql`
    CREATE TABLE runs (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      task_id text NOT NULL,
      agent_id text NOT NULL UNIQUE,
      action text NOT NULL CHECK (action IN ('execute','review','resolve')),
      attempt integer NOT NULL DEFAULT 1,
      status text NOT NULL CHECK (status IN ('queued','running','finished','failed','cancelled')),
      transition text CHECK (transition IN ('submit','approve','reject','escalate')),
      failure text,
      not_before timestamptz,
      worker_id text,
      prompt text,
      prompt_chars integer,
      exit_code integer,
      signal text,
      timed_out boolean NOT NULL DEFAULT false,
      duration_ms integer,
      scope_violations text[] NOT NULL DEFAULT '{}',
      output text,
      output_truncated boolean NOT NULL DEFAULT false,
      commit_sha text,
      tokens_in bigint NOT NULL DEFAULT 0,
      tokens_out bigint NOT NULL DEFAULT 0,
      cost_usd double precision NOT NULL DEFAULT 0,
      timing jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      ended_at timestamptz,
      FOREIGN KEY (project_id, task_id) REFERENCES tasks(project_id, id) ON DELETE CASCADE
    )`.execute(db);
  await sql`CREATE INDEX runs_active_idx ON runs (project_id) WHERE status IN ('queued','running')`.execute(
    db,
  );
  await sql`CREATE INDEX runs_task_idx ON runs (project_id, task_id, created_at)`.execute(db);

  await sql`
    CREATE TABLE events (
      id bigserial PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      task_id text,
      run_id text,
      type text NOT NULL,
      data jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX events_project_idx ON events (project_id, id)`.execute(db);
  // Append-only: the history of transitions is never rewritten.
  await sql`
    CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'events is append-only (% refused)', TG_OP;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only()`.execute(db);

  await sql`
    CREATE TABLE decisions (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      id text NOT NULL,
      item_id text NOT NULL,
      revision integer NOT NULL DEFAULT 1,
      status text NOT NULL CHECK (status IN ('pending','resolved')),
      title text NOT NULL,
      reason text NOT NULL,
      question text NOT NULL,
      evidence jsonb NOT NULL DEFAULT '[]'::jsonb,
      options jsonb NOT NULL DEFAULT '[]'::jsonb,
      options_source text NOT NULL DEFAULT 'none',
      selected_option text,
      note text,
      resolution_id text,
      resolved_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      resolved_at timestamptz,
      PRIMARY KEY (project_id, id)
    )`.execute(db);
  await sql`CREATE INDEX decisions_pending_idx ON decisions (project_id) WHERE status = 'pending'`.execute(
    db,
  );

  await sql`
    CREATE TABLE incidents (
      id bigserial PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      task_id text,
      run_id text,
      kind text NOT NULL,
      message text NOT NULL,
      details jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE leases (
      project_id text PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
      owner text NOT NULL,
      expires_at timestamptz NOT NULL,
      acquired_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE api_tokens (
      id text PRIMARY KEY,
      name text NOT NULL,
      scope text NOT NULL CHECK (scope IN ('read','operate','admin')),
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz,
      last_used_at timestamptz
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    "api_tokens",
    "leases",
    "incidents",
    "decisions",
    "events",
    "runs",
    "task_dependencies",
    "tasks",
    "projects",
  ]) {
    await sql`DROP TABLE IF EXISTS ${sql.table(table)} CASCADE`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS events_append_only()`.execute(db);
}
