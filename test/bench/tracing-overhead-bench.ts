/**
 * What OpenTelemetry tracing costs a run (README "Traces"): the same cluster throughput
 * scenario (cluster-throughput-bench.ts: coordinator + worker processes, bwrap, the trivial
 * shell harness) run untraced, then traced with the standard OTEL_* variables pointing at a
 * local OTLP/HTTP receiver (test/support/otlp-receiver.ts, which decodes every export with the
 * official protobufs). The difference is the figure: throughput, the orchestration overhead per
 * run and the services' peak RSS, with the spans the receiver got.
 */
import { startOtlpReceiver } from "../support/otlp-receiver.ts";
import type { ServicesMode } from "./bench-services.ts";
import { benchThroughput, type ThroughputResult } from "./cluster-throughput-bench.ts";

export interface TracingOverheadResult {
  scenario: { projects: number; tasksPerProject: number; workers: number; workerConcurrency: number };
  untraced: TracingSide;
  traced: TracingSide & { spans: number; traces: number; refusedExports: number };
  /** traced − untraced (ms, MB) and traced / untraced (throughput). */
  overhead: {
    tasksPerSecondRatio: number;
    queuedToSpawnedP50Ms: number;
    exitedToCommittedP50Ms: number;
    coordinatorRssMb: number;
    workerRssMb: number;
  };
}

interface TracingSide {
  wallSeconds: number;
  tasksPerSecond: number;
  queuedToSpawnedP50Ms: number;
  exitedToCommittedP50Ms: number;
  coordinatorRssMb: number;
  workerRssMb: number;
}

const side = (r: ThroughputResult): TracingSide => ({
  wallSeconds: r.wallSeconds,
  tasksPerSecond: r.tasksPerSecond,
  queuedToSpawnedP50Ms: r.queuedToSpawnedMs.p50,
  exitedToCommittedP50Ms: r.exitedToCommittedMs.p50,
  coordinatorRssMb: r.coordinatorRssMb,
  workerRssMb: r.workerRssMb,
});

const round = (n: number) => Math.round(n * 100) / 100;

export async function benchTracingOverhead(
  tasksPerProject: number,
  services: ServicesMode = "build",
): Promise<TracingOverheadResult> {
  const scenario = { projects: 2, tasksPerProject, workers: 2, workerConcurrency: 2 };
  const options = { ...scenario, sandbox: "bwrap" as const, services };
  const untraced = side(await benchThroughput(options));
  const receiver = await startOtlpReceiver();
  try {
    const tracedRun = await benchThroughput({
      ...options,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        // Exported as the runs go (the SDK's default waits 5 s between exports).
        OTEL_BSP_SCHEDULE_DELAY: "500",
      },
    });
    const traced = side(tracedRun);
    return {
      scenario,
      untraced,
      traced: {
        ...traced,
        spans: receiver.spans.length,
        traces: new Set(receiver.spans.map((s) => s.traceId)).size,
        refusedExports: receiver.refused.length,
      },
      overhead: {
        tasksPerSecondRatio: round(traced.tasksPerSecond / untraced.tasksPerSecond),
        queuedToSpawnedP50Ms: round(traced.queuedToSpawnedP50Ms - untraced.queuedToSpawnedP50Ms),
        exitedToCommittedP50Ms: round(traced.exitedToCommittedP50Ms - untraced.exitedToCommittedP50Ms),
        coordinatorRssMb: round(traced.coordinatorRssMb - untraced.coordinatorRssMb),
        workerRssMb: round(traced.workerRssMb - untraced.workerRssMb),
      },
    };
  } finally {
    await receiver.close();
  }
}
