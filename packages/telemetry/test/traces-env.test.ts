import { describe, expect, it } from "vitest";
import { startRunTracing } from "../src/run-tracing.ts";
import { tracesRequested } from "../src/traces-env.ts";

describe("tracesRequested", () => {
  it("is off without OTEL_* variables, and with only unrelated ones", () => {
    expect(tracesRequested({})).toBe(false);
    expect(tracesRequested({ OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).toBe(false);
  });

  it("is on with an OTLP endpoint, general or for traces", () => {
    expect(tracesRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(tracesRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" })).toBe(true);
  });

  it("follows OTEL_TRACES_EXPORTER: none switches it off even with an endpoint, any other exporter on", () => {
    expect(
      tracesRequested({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }),
    ).toBe(false);
    expect(tracesRequested({ OTEL_TRACES_EXPORTER: "console" })).toBe(true);
    expect(tracesRequested({ OTEL_TRACES_EXPORTER: "none, otlp" })).toBe(true);
  });

  it("is off with OTEL_SDK_DISABLED=true whatever else is set", () => {
    expect(tracesRequested({ OTEL_SDK_DISABLED: "TRUE", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toBe(
      false,
    );
    expect(
      tracesRequested({ OTEL_SDK_DISABLED: "false", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }),
    ).toBe(true);
  });
});

describe("startRunTracing when traces are off", () => {
  it("answers null and starts no SDK: no global OpenTelemetry API is registered", async () => {
    expect(await startRunTracing({ serviceName: "overseer-test", env: {} })).toBeNull();
    const globals = Object.getOwnPropertySymbols(globalThis).map((s) => s.description ?? "");
    expect(globals.filter((name) => name.startsWith("opentelemetry.js.api"))).toEqual([]);
  });
});
