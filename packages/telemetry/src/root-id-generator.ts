import type { IdGenerator } from "@opentelemetry/sdk-trace";

/**
 * Random trace and span ids, except for the one root span started inside `withIds`: a run's
 * root span ends (and is exported) by the coordinator that applies its result, long after the
 * job carried its ids to the worker, whose phase spans are its children already. The SDK names
 * a new span's ids through its `IdGenerator`; this one hands it the ids the job was given.
 */
export class RunRootIdGenerator implements IdGenerator {
  private pending: { traceId: string; spanId: string } | null = null;

  /** `random`: the SDK's own `RandomIdGenerator` (loaded with the SDK, never before). */
  constructor(private readonly random: IdGenerator) {}

  /** Calls `start`, which must start exactly one root span synchronously, with these ids. */
  withIds<T>(ids: { traceId: string; spanId: string }, start: () => T): T {
    this.pending = ids;
    try {
      return start();
    } finally {
      this.pending = null;
    }
  }

  generateTraceId(): string {
    return this.pending?.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.pending?.spanId ?? this.random.generateSpanId();
  }

  /** Fresh ids for a new run's trace. */
  newIds(): { traceId: string; spanId: string } {
    return { traceId: this.random.generateTraceId(), spanId: this.random.generateSpanId() };
  }
}
