import { parseStructuredText, type TaskFileProblem } from "@overseer/task-files";
import { ApiError } from "../http/api-error.ts";

/**
 * The problems of a task file sent to the gateway, beyond what the task-file parser finds on
 * its own: ids that already exist in the project. With the parser's, they make one 422 that
 * lists them all, and nothing is imported.
 */

/** The 422 of a refused task file or task, listing every problem. */
export function rejectedFile(problems: readonly TaskFileProblem[]): ApiError {
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  const lines = problems.map((p) => p.message);
  return new ApiError(
    422,
    "invalid_task_file",
    `Task file rejected, nothing was imported (${count}): ${lines.join("; ")}`,
    { problems: problems.map((p) => ({ ...p })) },
  );
}

/** The string ids of a task file's entries, in file order (index = position), for the existing-id check. */
export function idsInFile(text: string, format: "json" | "yaml"): string[] {
  const parsed = parseStructuredText(text, format);
  if (!parsed.ok) return [];
  const value = parsed.value as unknown;
  const entries = Array.isArray(value)
    ? value
    : value !== null && typeof value === "object" && Array.isArray((value as { tasks?: unknown }).tasks)
      ? (value as { tasks: unknown[] }).tasks
      : [];
  return entries.map((e) =>
    e !== null && typeof e === "object" && typeof (e as { id?: unknown }).id === "string"
      ? (e as { id: string }).id
      : "",
  );
}

/** Tasks already in the project cannot be imported again. */
export function existingIdProblems(
  ids: readonly string[],
  existing: ReadonlySet<string>,
  projectId: string,
  source: string,
): TaskFileProblem[] {
  return ids
    .map((id, index) => ({ id, index }))
    .filter(({ id }) => existing.has(id))
    .map(({ id, index }) => ({
      kind: "duplicate-id" as const,
      source,
      index,
      taskId: id,
      message: `task #${index + 1} (${id}): a task with this id already exists in project ${projectId}; choose another id`,
    }));
}
