import { DEFAULT_MAX_IMPORT_TASKS, DEFAULT_MAX_TITLE_CHARS } from "@overseer/task-files";

/**
 * Defaults of the HTTP gateway, defined once. The service merges its options over them
 * (`resolveGatewayOptions`, which adds where its files are), and the settings take their
 * fallbacks from them. They live in config, below the service, because the settings schema
 * needs them. Each field is documented on `GatewayOptions`.
 */
export const GATEWAY_DEFAULTS = Object.freeze({
  host: "127.0.0.1",
  port: 7070,
  shutdownGraceMs: 5000,
  corsOrigins: Object.freeze([]) as readonly string[],
  rateLimitWritesPerMinute: 120,
  maxBodyBytes: 1_048_576,
  maxBodyDepth: 64,
  maxImportTasks: DEFAULT_MAX_IMPORT_TASKS,
  maxTitleChars: DEFAULT_MAX_TITLE_CHARS,
  tokenCacheTtlMs: 5000,
  tokenCacheMaxEntries: 10_000,
  keepAliveMs: 15_000,
  logBlockMs: 2000,
  maxOpenStreams: 1000,
  maxStreamsPerToken: 50,
  maxStreamsPerAddress: 100,
  workerStaleAfterMs: 30_000,
  conflictRetries: 5,
  readyTimeoutMs: 2000,
  metricsCacheMs: 5000,
  statusCacheTtlMs: 2000,
  fleetCacheMs: 1000,
  fleetStaleMs: 2000,
  compressMinBytes: 1024,
  accessLogSample: 10,
  accessLogSlowMs: 500,
  shutdownDrainMs: 5000,
  processMetrics: true,
  boardSessionTtlMs: 900_000,
  forgeWebhookSecret: "",
  slackSigningSecret: "",
  slackOperators: Object.freeze({}) as Readonly<Record<string, string>>,
  slackResponseOrigin: "https://hooks.slack.com",
});
