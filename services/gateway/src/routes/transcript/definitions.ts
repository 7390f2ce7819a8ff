import {
  ProjectRunParams,
  ProjectTaskParams,
  RunTranscriptSchema,
  TaskTranscriptSchema,
} from "@overseer/api-contract";
import { errorResponses, jsonResponse, READ_ERRORS, tableRoute } from "../route-kit.ts";

/** Transcripts (docs/transcripts.md): what the agent of a run, or of every run of a task, did. */

export const getRunTranscriptRoute = tableRoute("getRunTranscript", {
  method: "get",
  path: "/api/v1/projects/{id}/runs/{run_id}/transcript",
  tags: ["Runs"],
  summary: "A run's transcript (redacted)",
  description:
    "The entries the worker parsed from the agent's output: messages, reasoning, tool calls, their results (exit code, bounded output), file edits, usage, errors, and raw lines no parser understood. Stored with the run's result; while the run goes, the entries its worker published so far (the same `seq` as the `run.transcript` events on the project's event stream and as the stored transcript; `truncated` when the oldest were trimmed to the size bound). A run from before transcripts were stored is parsed from its stored output.",
  request: { params: ProjectRunParams },
  responses: {
    200: jsonResponse(RunTranscriptSchema, "The run's transcript."),
    ...errorResponses(...READ_ERRORS),
  },
});

export const getTaskTranscriptRoute = tableRoute("getTaskTranscript", {
  method: "get",
  path: "/api/v1/projects/{id}/tasks/{task_id}/transcript",
  tags: ["Tasks"],
  summary: "What the agents did on a task (redacted)",
  description:
    "Every run's transcript in the order the runs were created, each entry with its `runId`. The same entries as GET …/runs/{run_id}/transcript.",
  request: { params: ProjectTaskParams },
  responses: {
    200: jsonResponse(TaskTranscriptSchema, "The task's runs and their entries."),
    ...errorResponses(...READ_ERRORS),
  },
});
