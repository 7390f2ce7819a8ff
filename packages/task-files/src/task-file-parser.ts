import { readFile } from "node:fs/promises";
import { STAGE_EXPECTED, STAGE_PATTERN, TASK_DEFAULTS, type TaskCardInput } from "@overseer/domain";
import {
  describeReceived,
  expectedErrorMap,
  formatIssuePath,
  zodIssuesToConfigIssues,
} from "@overseer/input-errors";
import { z } from "zod";
import { findGlobProblem, SCOPE_GLOB_EXPECTED } from "./glob-validator.ts";
import { DEFAULT_MAX_IMPORT_TASKS } from "./import-limits.ts";
import { ROLE_PATTERN } from "./role-pattern.ts";
import {
  formatFromExtension,
  formatSyntaxProblem,
  parseStructuredText,
  type StructuredFormat,
} from "./structured-text-parser.ts";
import { describeTask, type TaskFileProblem } from "./task-file-problem.ts";
import { type TaskGraphNode, type TaskGraphOptions, validateTaskGraph } from "./task-graph-validator.ts";
import { DEFAULT_MAX_TITLE_CHARS } from "./task-limits.ts";
import { findUnsafeValue } from "./text-sanitizer.ts";

/**
 * Task files (`overseer task import`): a top-level array of tasks, or `{ tasks: [...] }`, in
 * JSON or YAML. Validation is all-or-nothing and exhaustive: every problem in the file is
 * reported in one pass (schema, ids, prerequisites, cycles, globs), and when there is any
 * problem no task is returned, so an import never applies half a file.
 */

/** Task ids such as `S00-028`. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const TASK_ID_EXPECTED = "a task id of letters, digits, ., _ or - (at most 64, like S00-028)";
/** Stage of a task whose id has no `S<digits>-` prefix and that names none. */
export const DEFAULT_STAGE = TASK_DEFAULTS.stage;
export const DEFAULT_ROLE = TASK_DEFAULTS.role;
export const DEFAULT_SCOPE: readonly string[] = TASK_DEFAULTS.scope;

const INT4_MIN = -2_147_483_648;
const INT4_MAX = 2_147_483_647;
const PRIORITY_EXPECTED = `an integer from ${INT4_MIN} to ${INT4_MAX} (higher runs first)`;

const taskId = z.string({ error: TASK_ID_EXPECTED }).regex(TASK_ID_PATTERN, { error: TASK_ID_EXPECTED });
const idList = z.array(taskId, { error: "an array of task ids" });

/** What may be written for one task. `null` counts as "not given" (YAML `body:` with nothing). */
const TaskInputSchema = z.strictObject({
  id: taskId,
  /** Default: the id's prefix before the first `-` when it looks like `S<digits>`, else `S00`. */
  stage: z.string().regex(STAGE_PATTERN, { error: STAGE_EXPECTED }).nullish(),
  title: z
    .string({ error: "a non-empty single-line string" })
    .refine((t) => t.trim() !== "" && !/[\r\n]/.test(t), { error: "a non-empty single-line string" }),
  /** Default "". */
  body: z.string().nullish(),
  /** Default "general". */
  role: z
    .string()
    .regex(ROLE_PATTERN, { error: "a role name of letters, digits, ., _ or - (like ci-cd)" })
    .nullish(),
  /** Paths the task may change. Default ["**"]. */
  scope: z
    .array(z.string({ error: SCOPE_GLOB_EXPECTED }), { error: "an array of globs" })
    .min(1, { error: "at least one glob (omit scope to allow every path)" })
    .nullish(),
  prerequisites: idList.nullish(),
  /** Alias of `prerequisites`. */
  prereqs: idList.nullish(),
  /** One criterion or a list. Default []. */
  acceptance: z
    .union([z.string(), z.array(z.string({ error: "a string" }))], {
      error: "a string or an array of strings",
    })
    .nullish(),
  /** Default 0; higher runs first. */
  priority: z
    .int({ error: PRIORITY_EXPECTED })
    .min(INT4_MIN, { error: PRIORITY_EXPECTED })
    .max(INT4_MAX, { error: PRIORITY_EXPECTED })
    .nullish(),
});

/** A validated task, defaults applied (prerequisites unique, in file order): a domain task card. */
export type TaskDefinition = TaskCardInput;

export type TaskFileResult =
  | { readonly ok: true; readonly tasks: readonly TaskDefinition[] }
  | { readonly ok: false; readonly problems: readonly TaskFileProblem[] };

export interface TaskFileOptions extends TaskGraphOptions {
  /** Most tasks one file may hold; more is one `shape` problem. Default DEFAULT_MAX_IMPORT_TASKS. */
  readonly maxTasks?: number;
  /** Whether a file without tasks is valid. Default true (an API import refuses it). */
  readonly allowEmpty?: boolean;
  /** Longest task title, in characters. Default `DEFAULT_MAX_TITLE_CHARS` (500). */
  readonly maxTitleChars?: number;
}

/** Parses and validates task file text. Never throws for bad input: problems are returned. */
export function parseTaskFile(
  text: string,
  format: StructuredFormat,
  source: string,
  options: TaskFileOptions = {},
): TaskFileResult {
  const parsed = parseStructuredText(text, format);
  if (!parsed.ok) {
    return {
      ok: false,
      problems: parsed.problems.map((p) => ({
        kind: "syntax",
        source,
        message: `invalid ${format.toUpperCase()}: ${formatSyntaxProblem(p)}`,
      })),
    };
  }
  return validateTaskList(parsed.value, source, options);
}

/** Reads a `.json`, `.yaml` or `.yml` task file. Unreadable files are a `read` problem. */
export async function loadTaskFile(path: string, options: TaskFileOptions = {}): Promise<TaskFileResult> {
  const format = formatFromExtension(path);
  if (!format) {
    return {
      ok: false,
      problems: [{ kind: "read", source: path, message: "expected a .json, .yaml or .yml file" }],
    };
  }
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return {
      ok: false,
      problems: [{ kind: "read", source: path, message: `cannot read the file (${code})` }],
    };
  }
  return parseTaskFile(text, format, path, options);
}

/** Validates already-parsed data (array of tasks or `{ tasks }`). */
export function validateTaskList(
  value: unknown,
  source: string,
  options: TaskFileOptions = {},
): TaskFileResult {
  const entries = topLevelTasks(value);
  if (!Array.isArray(entries)) return { ok: false, problems: [{ kind: "shape", source, message: entries }] };
  const maxTasks = options.maxTasks ?? DEFAULT_MAX_IMPORT_TASKS;
  if (entries.length > maxTasks) {
    const message = `expected at most ${maxTasks} tasks in one file, received ${entries.length}; split the file into several imports (a plan: plan the next stage only)`;
    return { ok: false, problems: [{ kind: "shape", source, message }] };
  }
  if (options.allowEmpty === false && entries.length === 0) {
    const message = "expected at least one task, received an empty list";
    return { ok: false, problems: [{ kind: "shape", source, message }] };
  }

  const problems: TaskFileProblem[] = [];
  const tasks: TaskDefinition[] = [];
  const nodes: TaskGraphNode[] = [];
  const maxTitleChars = options.maxTitleChars ?? DEFAULT_MAX_TITLE_CHARS;

  entries.forEach((entry, index) => {
    const rawId =
      isRecord(entry) && typeof entry.id === "string" && TASK_ID_PATTERN.test(entry.id)
        ? entry.id
        : undefined;
    const who = describeTask(index, rawId);
    // The graph uses whatever is usable even in a task with schema errors, so one typo does
    // not cascade into "unknown prerequisite" reports for every task that depends on it.
    if (rawId !== undefined && isRecord(entry))
      nodes.push({ id: rawId, index, prerequisites: usablePrerequisites(entry) });

    const unsafe = findUnsafeValue(entry);
    if (unsafe) {
      problems.push({
        kind: "schema",
        source,
        index,
        taskId: rawId,
        field: unsafe.path,
        message: `${who}: ${unsafe.path}: expected text without NUL characters or lone surrogates, received one that ${unsafe.problem}`,
      });
    }
    const result = TaskInputSchema.safeParse(entry, { error: expectedErrorMap });
    if (!result.success) {
      for (const issue of zodIssuesToConfigIssues(result.error.issues, entry)) {
        problems.push({
          kind: "schema",
          source,
          index,
          taskId: rawId,
          field: issue.path || undefined,
          message: `${who}: ${issue.path || "(task)"}: expected ${issue.expected}, received ${issue.received}${issue.hint ? ` (${issue.hint})` : ""}`,
        });
      }
    }
    const titleProblem = titleTooLong(entry, maxTitleChars);
    if (titleProblem)
      problems.push({
        kind: "schema",
        source,
        index,
        taskId: rawId,
        field: "title",
        message: `${who}: ${titleProblem}`,
      });
    if (isRecord(entry) && entry.prerequisites != null && entry.prereqs != null) {
      problems.push({
        kind: "schema",
        source,
        index,
        taskId: rawId,
        field: "prereqs",
        message: `${who}: prereqs: expected only one of prerequisites or prereqs, received both`,
      });
    }
    if (isRecord(entry) && Array.isArray(entry.scope)) {
      entry.scope.forEach((glob, i) => {
        if (typeof glob !== "string") return;
        const problem = findGlobProblem(glob);
        if (problem)
          problems.push({
            kind: "bad-glob",
            source,
            index,
            taskId: rawId,
            field: formatIssuePath(["scope", i]),
            message: `${who}: scope[${i}]: expected ${SCOPE_GLOB_EXPECTED}, received ${describeReceived(glob)}, which ${problem}`,
          });
      });
    }
    if (result.success && !unsafe && !titleProblem) tasks.push(normalizeTask(result.data));
  });

  problems.push(...validateTaskGraph(nodes, source, options));
  return problems.length > 0 ? { ok: false, problems } : { ok: true, tasks };
}

/** The problem of a title longer than `max` characters, or null. */
function titleTooLong(entry: unknown, max: number): string | null {
  if (!isRecord(entry) || typeof entry.title !== "string" || entry.title.length <= max) return null;
  return `title: expected at most ${max} characters (put the details in body), received ${entry.title.length}`;
}

function topLevelTasks(value: unknown): unknown[] | string {
  if (Array.isArray(value)) return value;
  if (isRecord(value)) {
    const extra = Object.keys(value).filter((k) => k !== "tasks");
    if (extra.length > 0)
      return `expected only the key "tasks" at the top level, received ${extra.map((k) => JSON.stringify(k)).join(", ")}`;
    if (Array.isArray(value.tasks)) return value.tasks;
    return `expected "tasks" to be an array of tasks, received ${describeReceived(value.tasks)}`;
  }
  return `expected an array of tasks or an object { tasks: [...] }, received ${describeReceived(value)}`;
}

function usablePrerequisites(entry: Record<string, unknown>): string[] {
  const lists = [entry.prerequisites, entry.prereqs].filter(Array.isArray) as unknown[][];
  return lists.flat().filter((p): p is string => typeof p === "string" && TASK_ID_PATTERN.test(p));
}

function normalizeTask(input: z.output<typeof TaskInputSchema>): TaskDefinition {
  const acceptance = input.acceptance ?? [];
  return Object.freeze({
    id: input.id,
    stage: input.stage ?? stageFromId(input.id),
    title: input.title.trim(),
    body: input.body ?? "",
    role: input.role ?? DEFAULT_ROLE,
    scope: Object.freeze([...(input.scope ?? DEFAULT_SCOPE)]),
    prerequisites: Object.freeze([...new Set([...(input.prerequisites ?? []), ...(input.prereqs ?? [])])]),
    acceptance: Object.freeze(typeof acceptance === "string" ? [acceptance] : [...acceptance]),
    priority: input.priority ?? 0,
  });
}

/** `S03-010` → `S03`; ids without an `S<digits>-` prefix → `S00`. */
export function stageFromId(id: string): string {
  const prefix = id.split("-")[0] ?? "";
  return id.includes("-") && /^S\d+$/.test(prefix) ? prefix : DEFAULT_STAGE;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
