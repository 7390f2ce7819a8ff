/**
 * The OpenTelemetry SDK side of run tracing, loaded only when the `OTEL_*` variables ask for
 * traces (run-tracing.ts). `NodeSDK` reads every standard variable itself (exporter, protocol,
 * endpoint, headers, batch processor, resource); Overseer adds its service name, the root ids
 * of each run (root-id-generator.ts) and a sampler that keeps every run's trace whole. The
 * OpenTelemetry packages are imported here, dynamically, so that no bundle of a service loads
 * them unless traces are on.
 */
import type { Attributes, Context, Tracer } from "@opentelemetry/api";
import type { RunJob, RunPhase, RunResult } from "@overseer/run-contract";
import type { TranscriptEntry } from "@overseer/transcript";
import { agentActivitySpans } from "./agent-activity.ts";
import { RunRootIdGenerator } from "./root-id-generator.ts";
import type { AppliedRun, RunIdentity, RunTracing } from "./run-tracing-types.ts";

const TRACER_NAME = "@overseer/telemetry";

/** The OpenTelemetry modules, loaded when traces are on. */
async function loadOpenTelemetry() {
  const [api, core, node, sdkTrace] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/core"),
    import("@opentelemetry/sdk-node"),
    import("@opentelemetry/sdk-trace"),
  ]);
  return { api, core, NodeSDK: node.NodeSDK, sdkTrace };
}
type OpenTelemetry = Awaited<ReturnType<typeof loadOpenTelemetry>>;

/** The attributes every span of a run's trace carries. */
export function runAttributes(run: RunIdentity): Attributes {
  return {
    "overseer.run.id": run.runId,
    "overseer.task.id": run.taskId,
    "overseer.project.id": run.projectId,
  };
}

/** The span name of a phase: `overseer.<phase>` (`overseer.queue_wait`, `overseer.agent`…). */
export function phaseSpanName(phase: RunPhase["name"]): string {
  return `overseer.${phase}`;
}

/** Span helpers over the loaded API: the remote context of a traceparent, one finished span. */
function spanTools(otel: OpenTelemetry) {
  const { api, core } = otel;
  const propagator = new core.W3CTraceContextPropagator();
  return {
    propagator,
    /** The remote context a `traceparent` names (the run's root span), or null when malformed. */
    contextOf(traceparent: string): Context | null {
      const ctx = propagator.extract(api.ROOT_CONTEXT, { traceparent }, api.defaultTextMapGetter);
      return api.trace.getSpanContext(ctx) ? ctx : null;
    },
    /** One finished span, from `start` to `end` (epoch ms), under `parent`. */
    emit(
      tracer: Tracer,
      parent: Context,
      span: { name: string; start: number; end: number; attributes: Attributes; error?: boolean },
    ) {
      const started = tracer.startSpan(
        span.name,
        {
          kind: api.SpanKind.INTERNAL,
          startTime: core.millisToHrTime(span.start),
          attributes: span.attributes,
        },
        parent,
      );
      if (span.error) started.setStatus({ code: api.SpanStatusCode.ERROR });
      started.end(core.millisToHrTime(Math.max(span.start, span.end)));
      return started;
    },
  };
}

export async function startSdkRunTracing(options: {
  serviceName: string | null;
  maxAgentSpans: number;
}): Promise<RunTracing> {
  const otel = await loadOpenTelemetry();
  const { api, NodeSDK, sdkTrace } = otel;
  const { trace, ROOT_CONTEXT } = api;
  const { propagator, contextOf, emit } = spanTools(otel);
  const ids = new RunRootIdGenerator(new sdkTrace.RandomIdGenerator());
  const sdk = new NodeSDK({
    ...(options.serviceName !== null ? { serviceName: options.serviceName } : {}),
    idGenerator: ids,
    // Every run's trace is kept whole: a root dropped while its children are kept (or the other
    // way round) would be no trace at all. Sample in a collector, whole traces at a time.
    sampler: new sdkTrace.ParentBasedSampler({ root: new sdkTrace.AlwaysOnSampler() }),
    instrumentations: [],
    // Overseer exports traces only (its metrics are /metrics, its logs pino's).
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  const tracer = trace.getTracer(TRACER_NAME);

  return {
    newRunTrace() {
      const { traceId, spanId } = ids.newIds();
      const carrier: Record<string, string> = {};
      const root = trace.setSpanContext(ROOT_CONTEXT, {
        traceId,
        spanId,
        traceFlags: api.TraceFlags.SAMPLED,
      });
      propagator.inject(root, carrier, api.defaultTextMapSetter);
      return carrier.traceparent as string;
    },

    recordWorkerRun(job: RunJob, result: RunResult, agentEntries: readonly TranscriptEntry[]) {
      const parent = job.traceparent ? contextOf(job.traceparent) : null;
      if (parent === null) return;
      const attributes = runAttributes(job);
      for (const phase of result.timing.timeline ?? []) {
        const end = phase.startedAt + phase.durationMs;
        const span = emit(tracer, parent, {
          name: phaseSpanName(phase.name),
          start: phase.startedAt,
          end,
          attributes: { ...attributes, "overseer.phase": phase.name },
        });
        if (phase.name !== "agent") continue;
        const window = { start: phase.startedAt, end };
        const activity = agentActivitySpans(agentEntries, window, options.maxAgentSpans);
        const agentContext = trace.setSpan(parent, span);
        for (const call of activity.spans) {
          emit(tracer, agentContext, { ...call, attributes: { ...attributes, ...call.attributes } });
        }
        if (activity.dropped > 0) span.setAttribute("overseer.agent.spans_dropped", activity.dropped);
      }
    },

    recordApplied(run: AppliedRun) {
      const parent = contextOf(run.traceparent);
      const root = parent === null ? undefined : trace.getSpanContext(parent);
      const first = run.phases[0];
      const applied = run.phases.at(-1);
      if (parent === null || root === undefined || first === undefined || applied === undefined) return;
      const attributes = runAttributes(run);
      emit(tracer, parent, {
        name: phaseSpanName(applied.name),
        start: applied.startedAt,
        end: applied.startedAt + applied.durationMs,
        attributes: { ...attributes, "overseer.phase": applied.name },
      });
      ids.withIds({ traceId: root.traceId, spanId: root.spanId }, () =>
        emit(tracer, ROOT_CONTEXT, {
          name: "overseer.run",
          start: first.startedAt,
          end: applied.startedAt + applied.durationMs,
          attributes: {
            ...attributes,
            "overseer.run.action": run.action,
            "overseer.agent.id": run.agentId,
            "overseer.run.outcome": run.outcome,
          },
          error: run.failed,
        }),
      );
    },

    shutdown: () => sdk.shutdown(),
  };
}
