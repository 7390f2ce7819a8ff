export { QUEUE_DEFAULTS } from "./queue-defaults.ts";
export {
  LOG_LEVELS,
  type LogLevel,
  type ServiceSettings,
  type SettingReference,
} from "./service-settings.ts";
export { SETTINGS_REFERENCE } from "./service-settings-schema.ts";
export { loadSettings, loadSettingsOrExit } from "./settings-loader.ts";
export { renderSettingsMarkdown } from "./settings-markdown-renderer.ts";
