import { TranscriptEntrySchema as Entry } from "@overseer/transcript";
import { z } from "./openapi-zod.ts";

/**
 * A run's transcript over HTTP (docs/transcripts.md). The entries keep the field names of
 * @overseer/transcript (camelCase, one schema for the worker, the API, the live stream, the CLI
 * and the web app); the envelopes are snake_case like the rest of the API.
 */
/**
 * `.openapi()` through the extended prototype: @overseer/transcript may be loaded (by the run
 * contract) before openapi-zod.ts extends zod, and zod 4 gives a schema only the methods its
 * prototype had when it was made. The call returns a new schema made after the extension.
 */
const withOpenApi = z.ZodType.prototype.openapi as (this: typeof Entry, ...args: unknown[]) => typeof Entry;
export const TranscriptEntrySchema = withOpenApi.call(Entry, "TranscriptEntry", {
  description:
    "One entry of a run's transcript: kind message, reasoning, tool_call, tool_result, file_edit, usage, error or raw (a line no parser understood, kept as it was). `seq` orders a run's entries; `runId` is set in a task's transcript.",
});

export const RunTranscriptSchema = z
  .object({
    run_id: z.string(),
    agent: z
      .string()
      .nullable()
      .openapi({ description: "The agent kind whose output was parsed (null: unknown)." }),
    entries: z.array(TranscriptEntrySchema),
    truncated: z.boolean().openapi({
      description: "Whether entries were left out to respect the stored size bound (the oldest go first).",
    }),
  })
  .openapi("RunTranscript");

export const TaskTranscriptSchema = z
  .object({
    task_id: z.string(),
    runs: z.array(z.object({ run_id: z.string(), agent: z.string().nullable(), truncated: z.boolean() })),
    entries: z
      .array(TranscriptEntrySchema)
      .openapi({ description: "Every run's entries, runs in order, each with `runId`." }),
    truncated: z
      .boolean()
      .openapi({ description: "Whether any run's transcript was cut to its size bound." }),
  })
  .openapi("TaskTranscript");

/** A `run.transcript` live event on the project stream: the entries a run's output just completed. */
export const RunTranscriptEventSchema = z
  .object({ runId: z.string(), entries: z.array(TranscriptEntrySchema) })
  .openapi("RunTranscriptEvent");
