import { sql } from "kysely";
import { type Db, json } from "./connection.ts";

/** A run's transcript as stored: the worker's parsed entries, unvalidated JSON (callers parse). */
export interface StoredRunTranscript {
  runId: string;
  taskId: string;
  agent: string | null;
  entries: unknown[];
  truncated: boolean;
}

/**
 * Stores a run's transcript beside its row (one per run: a redelivered result writes the same
 * again). Its task and project come from the run row, so a transcript never names another's.
 */
export async function storeRunTranscript(
  db: Db,
  runId: string,
  transcript: { agent: string | null; entries: readonly unknown[]; truncated: boolean },
): Promise<void> {
  const text = JSON.stringify(transcript.entries);
  await sql`INSERT INTO run_transcripts (run_id, project_id, task_id, agent, entries, truncated, bytes)
    SELECT id, project_id, task_id, ${transcript.agent}, ${text}::jsonb, ${transcript.truncated}, ${Buffer.byteLength(text)}
    FROM runs WHERE id = ${runId}
    ON CONFLICT (run_id) DO UPDATE SET agent = EXCLUDED.agent, entries = EXCLUDED.entries,
      truncated = EXCLUDED.truncated, bytes = EXCLUDED.bytes`.execute(db);
}

/** A project's run's stored transcript, or null (the run has none yet, or is not this project's). */
export async function getRunTranscript(
  db: Db,
  projectId: string,
  runId: string,
): Promise<StoredRunTranscript | null> {
  const row = await db
    .selectFrom("run_transcripts")
    .select(["run_id", "task_id", "agent", "entries", "truncated"])
    .where("project_id", "=", projectId)
    .where("run_id", "=", runId)
    .executeTakeFirst();
  return row
    ? {
        runId: row.run_id,
        taskId: row.task_id,
        agent: row.agent,
        entries: row.entries,
        truncated: row.truncated,
      }
    : null;
}

/** The stored transcripts of a task's runs, keyed by run id (runs without one are absent). */
export async function listTaskTranscripts(
  db: Db,
  projectId: string,
  taskId: string,
): Promise<Map<string, StoredRunTranscript>> {
  const rows = await db
    .selectFrom("run_transcripts")
    .select(["run_id", "task_id", "agent", "entries", "truncated"])
    .where("project_id", "=", projectId)
    .where("task_id", "=", taskId)
    .execute();
  return new Map(
    rows.map((row) => [
      row.run_id,
      {
        runId: row.run_id,
        taskId: row.task_id,
        agent: row.agent,
        entries: row.entries,
        truncated: row.truncated,
      },
    ]),
  );
}

/**
 * The insert of a run's transcript whose run, task and project are known (the run's own ending
 * update carries it as a CTE: no statement of its own). Same effect as storeRunTranscript.
 */
export function runTranscriptInsert(
  db: Db,
  run: { runId: string; projectId: string; taskId: string },
  transcript: { agent: string | null; entries: readonly unknown[]; truncated: boolean },
) {
  const text = JSON.stringify(transcript.entries);
  return db
    .insertInto("run_transcripts")
    .values({
      run_id: run.runId,
      project_id: run.projectId,
      task_id: run.taskId,
      agent: transcript.agent,
      entries: json(transcript.entries),
      truncated: transcript.truncated,
      bytes: Buffer.byteLength(text),
    })
    .onConflict((oc) =>
      oc.column("run_id").doUpdateSet((eb) => ({
        agent: eb.ref("excluded.agent"),
        entries: eb.ref("excluded.entries"),
        truncated: eb.ref("excluded.truncated"),
        bytes: eb.ref("excluded.bytes"),
      })),
    );
}
