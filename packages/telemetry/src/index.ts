/**
 * @overseer/telemetry — OpenTelemetry traces of runs (README "Watching runs"): one trace per
 * run from the phase timings the worker and the coordinator record (run-contract run-phases.ts),
 * exported over OTLP only when the standard `OTEL_*` variables ask for it. Off, the SDK is never
 * loaded.
 */
export { type ActivitySpan, AgentActivityRecorder, agentActivitySpans } from "./agent-activity.ts";
export {
  type AppliedRun,
  type RunIdentity,
  type RunTracing,
  type RunTracingOptions,
  startRunTracing,
  TRACING_DEFAULTS,
} from "./run-tracing.ts";
export { type TraceEnv, tracesRequested } from "./traces-env.ts";
