export { CLUSTER_DEFAULTS } from "./cluster-defaults.ts";
export { COORDINATOR_DEFAULTS } from "./coordinator-defaults.ts";
export { GATEWAY_DEFAULTS } from "./gateway-defaults.ts";
export { QUEUE_DEFAULTS } from "./queue-defaults.ts";
export {
  LOG_LEVELS,
  type LogLevel,
  type ServiceSettings,
  type SettingReference,
} from "./service-settings.ts";
export { defaultWorkerId } from "./setting-value-schemas.ts";
export { loadSettings, loadSettingsOrExit } from "./settings-loader.ts";
export { renderSettingsMarkdown, SETTINGS_REFERENCE } from "./settings-markdown-renderer.ts";
export { RUN_FENCE_DEFAULTS, WORKER_DEFAULTS } from "./worker-defaults.ts";
