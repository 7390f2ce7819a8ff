/**
 * A run's rendered prompt is kept once: on its run's row (`runs.prompt`, what the run views
 * show, kept after the run), not also inside its stored job (`run_jobs.job`), which is read back
 * with the prompt put in again from the run's row. The claim that stores both wrote the prompt
 * twice: serialized twice over in the coordinator's statement, parsed into jsonb, compressed
 * and logged to the WAL twice in Postgres. Both are written by the same statement (storeRunJob,
 * a claim's insertEvents), and nothing changes the run's prompt while its job is stored.
 */
import { type RawBuilder, sql } from "kysely";
import { json } from "./connection.ts";

/** The job as `run_jobs.job` stores it: without its prompt. */
export function storedJob(job: { prompt: string }): RawBuilder<unknown> {
  const { prompt: _, ...rest } = job;
  return json(rest);
}

/**
 * The stored job with its prompt, given the SQL names of the job column and of its run's
 * `prompt` column: NULL when there is no job; a job stored with its prompt (before this
 * change) reads the same, and with no prompt on the run's row it keeps its own.
 */
export function jobWithPrompt(job: string, prompt: string): RawBuilder<unknown> {
  return sql`(${sql.ref(job)} || jsonb_strip_nulls(jsonb_build_object('prompt', ${sql.ref(prompt)})))`;
}
