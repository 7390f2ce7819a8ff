export {
  DEFAULT_MAX_WATCHED_DIRS,
  DEFAULT_WATCH_IGNORE,
} from "./activity-watcher.ts";
export { type ArgvPlaceholders, expandArgv } from "./argv-expander.ts";
export { agentBinDir, agentCommands, fakeHarnessPath, overseerAgentPath } from "./bundled-paths.ts";
export {
  type ControlDirErrorCode,
  DEFAULT_CONTROL_MAX_BYTES,
  type ReadControlDirOptions,
  type ReadControlDirResult,
  readControlDir,
} from "./control-dir-reader.ts";
export { resolveExecutable } from "./executable-resolver.ts";
export {
  classifyFailure,
  cliRetryWatch,
  FAILURE_TAIL_LINES,
  type FailureCause,
  fixFor,
  lastLines,
} from "./failure-classifier.ts";
export { HARNESS_DEFAULTS } from "./harness-defaults.ts";
export { buildHarnessEnv, DEFAULT_SYSTEM_PATH, type HarnessEnvInput } from "./harness-env-builder.ts";
export {
  HarnessAbortedError,
  HarnessNotConfiguredError,
  type HarnessNotConfiguredReason,
  PromptTooLargeError,
} from "./harness-errors.ts";
export {
  DEFAULT_CONTROL_POLL_MS,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_KILL_GRACE_MS,
  type HarnessEndReason,
  type HarnessRunResult,
  type RunHarnessOptions,
  runHarness,
  type WrapCommand,
  type WrappedCommand,
} from "./harness-runner.ts";
export {
  type MissionPromptContext,
  missionSection,
  PLAN_REVIEW_MAX_CHARS,
  planDigest,
} from "./mission-prompt.ts";
export { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_OUTPUT_FLUSH_MS } from "./output-collector.ts";
export {
  type TerminateOutcome,
  terminateProcessGroup,
} from "./process-group-killer.ts";
export {
  FEEDBACK_KEEP_CHARS,
  MIN_SECTION_CHARS,
  type PromptAction,
  type PromptAdjustment,
  type PromptInput,
  type PromptRenderResult,
  type PromptSectionName,
  renderPrompt,
} from "./prompt-renderer.ts";
export { type MissionPromptEvidence, renderRunPrompt } from "./run-prompt.ts";
export { readSessionFileFrom, readSessionFiles, sessionFilePaths } from "./session-files.ts";
export { costOf, type HarvestedUsage, harvestUsage, type ModelPrice, UsageMeter } from "./usage-harvester.ts";
