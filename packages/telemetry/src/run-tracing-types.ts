import type { RunJob, RunPhase, RunResult } from "@overseer/run-contract";
import type { TranscriptEntry } from "@overseer/transcript";

/** Which run a span belongs to: the attributes every span of its trace carries. */
export interface RunIdentity {
  runId: string;
  taskId: string;
  projectId: string;
}

/** How the coordinator saw the run end, for its root span. */
export interface AppliedRun extends RunIdentity {
  /** The result's `traceparent` (the job's): the trace and the root span's ids. */
  traceparent: string;
  action: string;
  agentId: string;
  /** A transition's kind (`submit`, `approve`…) or how the run ended otherwise (`timeout`…). */
  outcome: string;
  /** Whether the run counts as failed (no transition, timeout, violation, misconfigured). */
  failed: boolean;
  /** The whole timeline, `result_applied` included, as stored with the run. */
  phases: readonly RunPhase[];
}

/**
 * A run's trace, recorded from the same phase timings Postgres stores (run-contract
 * run-phases.ts): one trace per run whose root span `overseer.run` lasts from the run's creation
 * to its result's application, with one child span per phase and, under `overseer.agent`, one
 * per model call and tool call read from the agent's output.
 *
 *   coordinator  `newRunTrace()` when it enqueues the job (its `traceparent`), then
 *                `recordApplied()` once the result is applied: `overseer.result_applied` and
 *                the root span, with the ids the job carried;
 *   worker       `recordWorkerRun()` once it reported the result: the phase spans up to `land`,
 *                children of that root, and the agent's calls.
 */
export interface RunTracing {
  newRunTrace(): string;
  recordWorkerRun(job: RunJob, result: RunResult, agentEntries: readonly TranscriptEntry[]): void;
  recordApplied(run: AppliedRun): void;
  /** Exports what is still buffered and stops the SDK. */
  shutdown(): Promise<void>;
}
