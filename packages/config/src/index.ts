// The one zod-issue formatter and the redactor live in @overseer/input-errors (below config and
// sandbox, so both use them); config offers them to its users unchanged.
export {
  type ConfigIssue,
  createRedactor,
  describeReceived,
  formatIssueLine,
  formatZodIssues,
  MIN_REDACTABLE_SECRET_LENGTH,
  REDACTED,
  valueAtPath,
  zodIssuesToConfigIssues,
} from "@overseer/input-errors";
export { AGENT_KINDS, type AgentKind } from "./agent-kinds.ts";
export {
  AGENT_PRESETS,
  type AgentPresetInfo,
  type AgentPresetOptions,
  agentPresetConfig,
  allowHostOf,
  CODEX_HOME_DIR,
  COPILOT_HOME_DIR,
  configKeyEnv,
  GEMINI_HOME_DIR,
  GEMINI_SETTINGS,
  PRESET_TRANSITION_LINGER_SECONDS,
  presetKeyEnv,
} from "./agent-presets.ts";
export { ConfigError, formatConfigIssue } from "./config-error.ts";
export { findGlobProblem, SCOPE_GLOB_OPTIONS } from "./glob-validator.ts";
export { DEFAULT_MAX_IMPORT_TASKS } from "./import-limits.ts";
export { createLogger, type Logger, type LoggerOptions } from "./logger.ts";
export {
  PRICE_TABLE,
  PRICE_TABLE_DATE,
  type ResolvedPrice,
  resolvePrice,
  type TokenPrice,
  unpricedBudgetWarning,
} from "./price-table.ts";
export { QUEUE_DEFAULTS } from "./queue-defaults.ts";
export { findRepositoryLocationProblem } from "./repository-location.ts";
export {
  commandForRole,
  exemptGlobsFor,
  loadRunnerConfigFile,
  parseRunnerConfig,
  ROLE_PATTERN,
  type RunnerAction,
  type RunnerConfig,
  type RunnerConfigInput,
  RunnerConfigSchema,
  redactRunnerConfig,
  runnerConfigSecretValues,
} from "./runner-config-schema.ts";
export { ALWAYS_EXEMPT_GLOBS, createScopeMatcher } from "./scope-matcher.ts";
export { runUntilSignalled, type ServiceLifecycleOptions } from "./service-lifecycle.ts";
export {
  LOG_LEVELS,
  type LogLevel,
  type ServiceSettings,
  type SettingReference,
} from "./service-settings.ts";
export { SETTINGS_REFERENCE } from "./service-settings-schema.ts";
export { loadSettings, loadSettingsOrExit } from "./settings-loader.ts";
export { renderSettingsMarkdown } from "./settings-markdown-renderer.ts";
export { formatFromExtension, parseStructuredText, type StructuredFormat } from "./structured-text-parser.ts";
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
