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
export {
  ENVIRONMENT_FILE,
  type EnvironmentFile,
  type EnvironmentFileResult,
  MAX_ENVIRONMENT_FILE_BYTES,
  parseEnvironmentFile,
} from "./environment-file.ts";
export {
  FORGE_KIND_NAMES,
  type ForgeAuth,
  type ForgeKindName,
  type ForgeSettingsInput,
  forgeAuthOf,
  isForgeRepository,
  LANDING_MODES,
  type LandingMode,
  PULL_REQUEST_DEFAULTS,
  PULL_REQUEST_MERGE_METHODS,
  PULL_REQUEST_MERGE_POLICIES,
  PULL_REQUEST_ON_CLOSED,
  PULL_REQUEST_PREREQUISITES,
  type PullRequestMergeMethod,
  type PullRequestMergePolicy,
} from "./landing-config-schema.ts";
export {
  type ForgeSettings,
  type LandingSettings,
  landingSettingsOf,
  type PullRequestSettings,
} from "./landing-settings.ts";
export {
  PRICE_TABLE,
  PRICE_TABLE_DATE,
  type ResolvedPrice,
  resolvePrice,
  type TokenPrice,
  unpricedBudgetWarning,
} from "./price-table.ts";
export { findRepositoryLocationProblem } from "./repository-location.ts";
export {
  commandForRole,
  exemptGlobsFor,
  loadRunnerConfigFile,
  parseRunnerConfig,
  type RunnerAction,
  type RunnerConfig,
  type RunnerConfigInput,
  RunnerConfigSchema,
  redactRunnerConfig,
  runnerConfigSecretValues,
} from "./runner-config-schema.ts";
