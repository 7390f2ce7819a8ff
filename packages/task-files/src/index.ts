export { findGlobProblem, SCOPE_GLOB_EXPECTED, SCOPE_GLOB_OPTIONS } from "./glob-validator.ts";
export { DEFAULT_MAX_IMPORT_TASKS } from "./import-limits.ts";
export { ROLE_PATTERN } from "./role-pattern.ts";
export { ALWAYS_EXEMPT_GLOBS, createScopeMatcher } from "./scope-matcher.ts";
export {
  formatFromExtension,
  formatSyntaxProblem,
  parseStructuredText,
  type StructuredFormat,
} from "./structured-text-parser.ts";
export {
  DEFAULT_ROLE,
  DEFAULT_SCOPE,
  DEFAULT_STAGE,
  loadTaskFile,
  parseTaskFile,
  stageFromId,
  TASK_ID_PATTERN,
  type TaskDefinition,
  type TaskFileOptions,
  type TaskFileResult,
  validateTaskList,
} from "./task-file-parser.ts";
export { formatProblems, type TaskFileProblem, type TaskFileProblemKind } from "./task-file-problem.ts";
export {
  findDependencyCycles,
  type TaskGraphNode,
  type TaskGraphOptions,
  validateTaskGraph,
} from "./task-graph-validator.ts";
export { DEFAULT_MAX_TITLE_CHARS } from "./task-limits.ts";
export {
  decodeStrictUtf8,
  decodeUtf8,
  findUnsafeText,
  findUnsafeValue,
  nestingDepth,
  REPLACEMENT_CHARACTER,
  sanitizeText,
  sanitizeValue,
  type UnsafeTextProblem,
} from "./text-sanitizer.ts";
