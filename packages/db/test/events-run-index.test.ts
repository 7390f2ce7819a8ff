import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createScratchDatabase, listEvents, type ScratchDatabase } from "../src/index.ts";

/**
 * A run's events are read by its id (run page, transcript events, the pull request body's words
 * per run): with a long project history those reads use events_run_idx (migration 0018) and
 * touch the run's rows, not every event of the project.
 */

let scratch: ScratchDatabase;

beforeAll(async () => {
  scratch = await createScratchDatabase();
  await createProject(scratch.db, { id: "long", repo: "/tmp/none", runnerConfig: {}, objective: "history" });
  // 20,000 events of 2,000 other runs, then the three of the run asked for.
  await sql`INSERT INTO events (project_id, task_id, run_id, type, data)
    SELECT 'long', 'T-' || (n % 500), 'run-' || (n % 2000), 'run.output', '{}'::jsonb
    FROM generate_series(1, 20000) AS n`.execute(scratch.db);
  await sql`INSERT INTO events (project_id, task_id, run_id, type, data)
    SELECT 'long', 'T-x', 'run-asked', t, '{}'::jsonb
    FROM unnest(ARRAY['run.started', 'task.submitted', 'run.ended']) AS t`.execute(scratch.db);
  await sql`ANALYZE events`.execute(scratch.db);
});

afterAll(async () => {
  await scratch?.drop();
});

describe("events of one run", () => {
  it("are found through events_run_idx, whatever the project's history", async () => {
    const events = await listEvents(scratch.db, { projectId: "long", runId: "run-asked" });
    expect(events.map((e) => e.type)).toEqual(["run.started", "task.submitted", "run.ended"]);
    const plan = await sql<{ "QUERY PLAN": string }>`EXPLAIN SELECT * FROM events
      WHERE project_id = 'long' AND run_id = 'run-asked' ORDER BY id LIMIT 1000`.execute(scratch.db);
    const text = plan.rows.map((row) => row["QUERY PLAN"]).join("\n");
    expect(text).toContain("events_run_idx");
  });
});
