import type { RunJob, RunResult } from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";
import { AgentActivityRecorder, type RunTracing, TRACING_DEFAULTS } from "@overseer/telemetry";

/**
 * The traced runs of this worker (packages/telemetry): while a run whose job carries a
 * `traceparent` runs, its agent's output is read for model and tool calls; once its result is
 * reported, its phase spans are recorded. Without tracing (or without a traceparent) nothing is
 * read or kept. A tracing failure is logged and never touches the run.
 */
export class RunTraceRecorders {
  private readonly recorders = new Map<string, AgentActivityRecorder>();

  constructor(
    private readonly tracing: RunTracing | null,
    private readonly logger: Logger,
  ) {}

  begin(job: RunJob): void {
    if (this.tracing === null || job.traceparent === undefined) return;
    this.recorders.set(job.runId, new AgentActivityRecorder(job.agent, TRACING_DEFAULTS.maxAgentEntries));
  }

  /** The run's (already redacted) output as it streams. */
  write(job: RunJob, chunk: string): void {
    this.recorders.get(job.runId)?.write(chunk);
  }

  /** The run's spans, once its result was reported. */
  finish(job: RunJob, result: RunResult): void {
    const recorder = this.recorders.get(job.runId);
    this.recorders.delete(job.runId);
    if (recorder === undefined || this.tracing === null) return;
    try {
      this.tracing.recordWorkerRun(job, result, recorder.end().entries);
    } catch (error) {
      this.logger.warn({ err: error, runId: job.runId }, "recording the run's trace failed");
    }
  }

  /** A run that reports nothing (cancelled, handed back, lost): nothing is recorded. */
  drop(runId: string): void {
    this.recorders.delete(runId);
  }
}
