/** The process environment as the OpenTelemetry SDK reads it. */
export type TraceEnv = Readonly<Record<string, string | undefined>>;

const set = (value: string | undefined) => value !== undefined && value.trim() !== "";

/**
 * Whether the standard `OTEL_*` variables ask for traces: an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or an explicit
 * `OTEL_TRACES_EXPORTER` other than `none`, and not `OTEL_SDK_DISABLED=true`. Off otherwise:
 * Overseer then loads no OpenTelemetry SDK at all, so tracing costs nothing.
 */
export function tracesRequested(env: TraceEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  if (set(env.OTEL_TRACES_EXPORTER)) {
    const exporters = (env.OTEL_TRACES_EXPORTER as string)
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== "");
    return exporters.some((name) => name !== "none");
  }
  return set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}
