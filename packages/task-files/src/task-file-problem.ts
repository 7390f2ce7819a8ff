/** Everything that can be wrong with a task file. */
export type TaskFileProblemKind =
  /** The file could not be read, or its extension names no known format. */
  | "read"
  /** JSON/YAML syntax. */
  | "syntax"
  /** The top level is neither an array of tasks nor `{ tasks: [...] }`. */
  | "shape"
  /** A task field is missing, mistyped, out of range, or unknown. */
  | "schema"
  | "duplicate-id"
  | "unknown-prerequisite"
  | "self-dependency"
  | "cycle"
  | "bad-glob";

export interface TaskFileProblem {
  readonly kind: TaskFileProblemKind;
  /** File path or other label of the input. */
  readonly source: string;
  /** Complete human sentence, without the source prefix. */
  readonly message: string;
  /** 0-based position of the task in the file, when one task is concerned. */
  readonly index?: number;
  readonly taskId?: string;
  /** Field path inside the task (`scope[1]`, `prerequisites[0]`). */
  readonly field?: string;
  /** For `cycle`: the path, first id repeated last (`["A", "B", "A"]`). */
  readonly cycle?: readonly string[];
}

/**
 * Text for the CLI (`overseer task import` prints it and exits 2): a count, then one line per
 * problem as `source: message`.
 */
export function formatProblems(problems: readonly TaskFileProblem[]): string {
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  const lines = [`Task file rejected, nothing was imported (${count}):`];
  for (const p of problems) lines.push(`  ${p.source}: ${p.message}`);
  return `${lines.join("\n")}\n`;
}

/** `task #3 (S00-004)` — 1-based, as an editor counts; the id when there is a usable one. */
export function describeTask(index: number, id: string | undefined): string {
  return id === undefined ? `task #${index + 1}` : `task #${index + 1} (${id})`;
}
