import type { RepoMirror } from "@overseer/git";
import type { WrapCommand } from "@overseer/harness";
import {
  RUN_JOB_VERSION,
  type RunJob,
  type RunOutcome,
  type RunPhase,
  type RunPhaseName,
  type RunResult,
  type SandboxDriverName,
} from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";
import type { AgentCliInstall } from "./agent-cli-cache.ts";
import type { RunFence } from "./run-fence.ts";
import type { ImageSource, RunImage } from "./run-image.ts";

/** What a worker gives every run: where to work, how to sandbox it, its limits. */
export interface RunExecutorDeps {
  workerId: string;
  dataDir: string;
  logger: Logger;
  mirrorFor(job: RunJob): RepoMirror;
  /** Builds the sandbox wrapper for this run (paths it must see, its image), or undefined for none. */
  sandboxFor(job: RunJob, paths: RunPaths, image?: RunImage | null): Promise<WrapCommand | undefined>;
  /** The worker's image cache (runs of projects with `sandbox.image`); absent: such runs are refused. */
  imageFor?: ImageSource;
  /**
   * Installs the agent CLI a repository's `.overseer/environment.yml` names (agent-cli-cache.ts)
   * for runs on the image `digest`; absent: such runs are refused.
   */
  agentCliFor?(pkg: string, digest: string | null): Promise<AgentCliInstall>;
  /**
   * Why this worker cannot run the job under the sandbox driver its project asks for
   * (sandbox-choice.ts), or null. A refusal ends the run as a configuration error before checkout.
   */
  sandboxRefusal(job: RunJob): string | null;
  /** The driver the run's sandboxes use (the project's, as this worker honours it, else its own), recorded on the run. */
  sandboxDriverFor(job: RunJob): SandboxDriverName;
  killGraceMs: number;
  maxOutputBytes: number;
  /**
   * Disk a run may add to its checkout and control dir, in bytes (the worker's
   * OVERSEER_RUN_DISK_MB; a project's `sandbox.disk_mb` may only lower it).
   */
  diskLimitBytes: number;
  /** Pause between two disk measurements of a running run. */
  diskCheckMs: number;
  /** Files and directories a run may add to its checkout and control dir (OVERSEER_RUN_MAX_FILES). */
  maxFiles: number;
  /** Live output sink (already redacted). */
  onOutput?(job: RunJob, chunk: string): void;
  /** JSON bytes of a run's transcript kept (OVERSEER_MAX_TRANSCRIPT_BYTES). */
  maxTranscriptBytes: number;
  /**
   * Publishes transcript entries of a running run live (`run.transcript`) and keeps them (the
   * `kept` newest) where the transcript route reads a running run's; best effort.
   */
  publishTranscript?(job: RunJob, entries: readonly unknown[], kept: number): Promise<void>;
  /**
   * Sends a running run's usage so far (usage-tracker.ts): while it runs, whenever it changed
   * (at most every `usageReportMs`), and once more when a run ends without a result (cancel).
   */
  reportUsage?(job: RunJob, usage: NonNullable<RunResult["usage"]>): Promise<void>;
  /** Pause between two usage reports of a running run; 0: only at the end. */
  usageReportMs: number;
  /**
   * Retries in a row of a rate limit or an unreachable gateway, as the CLI reports them, after
   * which a run is ended (cliRetryWatch).
   */
  cliRetryLimit: number;
  /**
   * Mirror freshness per project: when it was last fetched or pushed, and how recent is
   * recent enough to skip the fetch before a new task's checkout (0 = always fetch).
   */
  mirrorFreshness: { lastSync: Map<string, number>; freshMs: number };
  /** Takes background work (checkout removal) the caller awaits before shutting down. */
  defer?(work: Promise<unknown>): void;
  /**
   * Fencing before any git side effect (commit, push, landing): throws `RunOwnershipLostError`
   * when this delivery no longer owns the run (its job was redelivered elsewhere).
   */
  confirmOwnership?(job: RunJob): Promise<void>;
  /**
   * Postgres's word on the run (run-fence.ts): every push of the run goes through its guard,
   * which pushes only while the run is live. Absent only in service tests without a database;
   * worker-main always sets it.
   */
  fence?: RunFence;
}

export interface RunPaths {
  runDir: string;
  checkout: string;
  controlDir: string;
  /**
   * The prompt, straight in the run dir and bound read-only into the sandbox as a file: no
   * directory of its own (each directory made and removed per run costs the worker's thread
   * ~0.2-0.5 ms of kernel CPU on the journal-less ext4 of the bench machine).
   */
  promptFile: string;
  /** The worktree's git metadata, bound read-only into the sandbox. */
  gitDirs: string[];
  /** Bundled commands (`overseer-agent`, the fake harness), bound read-only. */
  agentBinDir: string;
  /** The run's disk limit in bytes, or null: the sandbox also caps every file at it. */
  diskLimitBytes: number | null;
  /** The agent CLI installed for the run (`.overseer/environment.yml` agent.npm), bound read-only. */
  agentCli?: AgentCliInstall;
}

export interface Commits {
  commitSha: string | null;
  branchHead: string | null;
  landedSha: string | null;
  landedBranch: string | null;
  checkpointRef: string | null;
  /** pull_request mode: the approved head pushed to the pull request branch. */
  pullRequestHead?: { branch: string; sha: string } | null;
}

export const NO_COMMITS: Commits = {
  commitSha: null,
  branchHead: null,
  landedSha: null,
  landedBranch: null,
  checkpointRef: null,
};

/** What the harness was seen to do (exit, output, timing); absent when it never ran. */
export interface Observed {
  exitCode?: number | null;
  signal?: string | null;
  durationMs?: number;
  output?: string;
  outputTruncated?: boolean;
  spawnedAt?: number | null;
  exitedAt?: number | null;
}

export type ResultExtra = Observed &
  Partial<Commits> & {
    scopeViolations?: string[];
    usage?: RunResult["usage"];
    landingFailure?: RunResult["landingFailure"];
    transcript?: RunResult["transcript"];
    imageDigest?: string | null;
    sandboxDriver?: SandboxDriverName;
    environment?: RunResult["environment"];
  };

/** Epoch milliseconds at sub-millisecond resolution, monotonic within this process. */
function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

const tenth = (ms: number) => Math.round(ms * 10) / 10;

/**
 * Whether the project's mirror was fetched or pushed within the freshness window (by this
 * worker, or `mirrorSyncedAt`: by any process on the host, RepoMirror.syncedAt), so its refs
 * may stand in for the remote's where a compare-and-swap push or an exact commit check catches
 * a stale one. Never under pull requests: the landing branch moves on the forge.
 */
export function mirrorIsFresh(
  freshness: RunExecutorDeps["mirrorFreshness"],
  job: Pick<RunJob, "projectId" | "landing">,
  now = Date.now(),
  mirrorSyncedAt: number | null = null,
): boolean {
  const lastSync = Math.max(freshness.lastSync.get(job.projectId) ?? -Infinity, mirrorSyncedAt ?? -Infinity);
  return (
    job.landing?.viaPullRequests !== true &&
    freshness.freshMs > 0 &&
    Number.isFinite(lastSync) &&
    now - lastSync < freshness.freshMs
  );
}

/**
 * The run's phase timeline (run-contract run-phases.ts): `queue_wait` from the run's creation to
 * this pick, then one phase per `lap`, each from the previous lap to now, so the phases follow
 * each other without gaps. The result carries the timeline; the coordinator adds `result_applied`.
 */
export class PhaseClock {
  readonly pickedAt = epochNow();
  readonly timeline: RunPhase[] = [];
  private lapAt = this.pickedAt;

  constructor(job: Pick<RunJob, "createdAt" | "enqueuedAt">) {
    // Clocks of two hosts: a creation "after" the pick (skew) counts as no wait.
    const queuedAt = Math.min(job.createdAt ?? job.enqueuedAt, this.pickedAt);
    this.timeline.push({
      name: "queue_wait",
      startedAt: queuedAt,
      durationMs: tenth(this.pickedAt - queuedAt),
    });
  }

  lap(phase: RunPhaseName): void {
    const now = epochNow();
    this.timeline.push({ name: phase, startedAt: tenth(this.lapAt), durationMs: tenth(now - this.lapAt) });
    this.lapAt = now;
  }

  /** Milliseconds per worker phase (the queue wait is not the worker's), for the result's timing. */
  get phases(): Record<string, number> {
    const phases: Record<string, number> = {};
    for (const { name, durationMs } of this.timeline) {
      if (name !== "queue_wait") phases[name] = tenth((phases[name] ?? 0) + durationMs);
    }
    return phases;
  }
}

/** The result message of a run: its outcome and whatever was observed and committed. */
export function buildRunResult(
  job: RunJob,
  workerId: string,
  clock: PhaseClock,
  outcome: RunOutcome,
  extra: ResultExtra = {},
): RunResult {
  return {
    v: RUN_JOB_VERSION,
    kind: "run-result",
    runId: job.runId,
    projectId: job.projectId,
    workerId,
    outcome,
    ...(extra.usage ? { usage: extra.usage } : {}),
    scopeViolations: extra.scopeViolations ?? [],
    commitSha: extra.commitSha ?? null,
    branchHead: extra.branchHead ?? null,
    landedSha: extra.landedSha ?? null,
    landedBranch: extra.landedBranch ?? null,
    checkpointRef: extra.checkpointRef ?? null,
    landingFailure: extra.landingFailure ?? null,
    ...(extra.pullRequestHead ? { pullRequestHead: extra.pullRequestHead } : {}),
    exitCode: extra.exitCode ?? null,
    signal: extra.signal ?? null,
    durationMs: extra.durationMs ?? 0,
    output: extra.output ?? "",
    outputTruncated: extra.outputTruncated ?? false,
    ...(extra.transcript ? { transcript: extra.transcript } : {}),
    ...(extra.imageDigest ? { imageDigest: extra.imageDigest } : {}),
    ...(extra.sandboxDriver ? { sandboxDriver: extra.sandboxDriver } : {}),
    ...(extra.environment ? { environment: extra.environment } : {}),
    timing: {
      enqueuedAt: job.enqueuedAt,
      pickedAt: clock.pickedAt,
      spawnedAt: extra.spawnedAt ?? null,
      exitedAt: extra.exitedAt ?? null,
      reportedAt: Date.now(),
      phases: clock.phases,
      timeline: clock.timeline,
    },
    ...(job.traceparent ? { traceparent: job.traceparent } : {}),
  };
}

/**
 * This worker's delivery of the run no longer owns it: the job lock lapsed (the worker froze
 * or lost Redis) and the run was, or will be, redelivered. Nothing more may be pushed,
 * landed or reported for it from here.
 */
export class RunOwnershipLostError extends Error {
  override readonly name = "RunOwnershipLostError";
  constructor(runId: string) {
    super(`run ${runId} is no longer owned by this worker (its job lock lapsed); its outcome is dropped`);
  }
}

export class WorkerShutdownError extends Error {
  override readonly name = "WorkerShutdownError";
  constructor(runId: string) {
    super(`run ${runId} was interrupted by a worker shutdown; it will be redelivered`);
  }
}
