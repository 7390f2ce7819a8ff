import type { RunTracing } from "./run-tracing-types.ts";
import { type TraceEnv, tracesRequested } from "./traces-env.ts";

export type { AppliedRun, RunIdentity, RunTracing } from "./run-tracing-types.ts";

export interface RunTracingOptions {
  /** `service.name` when `OTEL_SERVICE_NAME` does not set one (`overseer-worker`…). */
  serviceName: string;
  /** Default: `process.env`. */
  env?: TraceEnv;
  /** Most model and tool call spans under one run's agent span (the rest are counted on it). */
  maxAgentSpans?: number;
}

export const TRACING_DEFAULTS = Object.freeze({
  /** Model and tool call spans one run's agent span may hold; more are counted, not exported. */
  maxAgentSpans: 1000,
  /** Transcript entries of one run a worker keeps for those spans (times and names, no texts). */
  maxAgentEntries: 5000,
});

/**
 * The run tracing the standard `OTEL_*` variables ask for (traces-env.ts), or null when they
 * ask for none: the OpenTelemetry SDK is then never loaded, so tracing off costs nothing.
 */
export async function startRunTracing(options: RunTracingOptions): Promise<RunTracing | null> {
  const env = options.env ?? process.env;
  if (!tracesRequested(env)) return null;
  const { startSdkRunTracing } = await import("./sdk-run-tracing.ts");
  return startSdkRunTracing({
    serviceName: env.OTEL_SERVICE_NAME?.trim() ? null : options.serviceName,
    maxAgentSpans: options.maxAgentSpans ?? TRACING_DEFAULTS.maxAgentSpans,
  });
}
