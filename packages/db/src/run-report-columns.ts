import type { Usage } from "@overseer/domain";
import { type Db, json } from "./connection.ts";
import type { RunPhaseRow } from "./database-schema.ts";

/** What a worker observed about a run, stored with the run's outcome in the same transaction. */
export interface RunReport {
  workerId?: string | null;
  prompt?: string | null;
  promptChars?: number | null;
  exitCode?: number | null;
  signal?: string | null;
  timedOut?: boolean;
  durationMs?: number | null;
  scopeViolations?: readonly string[];
  output?: string | null;
  outputTruncated?: boolean;
  commitSha?: string | null;
  startedAt?: number | null;
  usage?: Usage | null;
  /** The run's transcript as the worker parsed it (stored in run_transcripts); absent: none. */
  transcript?: { agent: string | null; entries: readonly unknown[]; truncated: boolean } | null;
  /** Epoch-ms milestones reported by the worker; `committed` is added here. */
  timing?: Record<string, number | null | Record<string, number>>;
  /** The run's phase timeline, stored as given (database-schema.ts `RunPhaseRow`). */
  phases?: readonly RunPhaseRow[];
  /** The digest of the run image the run ran on; absent or null: the worker's own system. */
  imageDigest?: string | null;
  /** The sandbox driver the run ran under; absent or null: none chosen (refused) or not reported. */
  sandboxDriver?: string | null;
  /** The run environment the run used (run-contract `RunEnvironment`); absent or null: none reported. */
  environment?: Record<string, unknown> | null;
}

export async function storeRunReport(db: Db, runId: string, report: RunReport): Promise<void> {
  await db.updateTable("runs").set(runReportColumns(report)).where("id", "=", runId).execute();
}

/** The run's columns a worker's report sets. */
export function runReportColumns(report: RunReport) {
  return {
    worker_id: report.workerId ?? null,
    // The prompt is stored at enqueue time; a report only overrides it when it has one.
    ...(report.prompt != null
      ? { prompt: report.prompt, prompt_chars: report.promptChars ?? report.prompt.length }
      : {}),
    exit_code: report.exitCode ?? null,
    signal: report.signal ?? null,
    timed_out: report.timedOut ?? false,
    duration_ms:
      report.durationMs === undefined || report.durationMs === null ? null : Math.round(report.durationMs),
    scope_violations: [...(report.scopeViolations ?? [])],
    output: report.output ?? null,
    output_truncated: report.outputTruncated ?? false,
    commit_sha: report.commitSha ?? null,
    ...(report.startedAt ? { started_at: new Date(report.startedAt) } : {}),
    ...(report.timing ? { timing: json({ ...report.timing, committed: Date.now() }) } : {}),
    ...(report.phases ? { phases: json(report.phases) } : {}),
    image_digest: report.imageDigest ?? null,
    sandbox_driver: report.sandboxDriver ?? null,
    environment: report.environment ? json(report.environment) : null,
  };
}
