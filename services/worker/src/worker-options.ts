import type { WrapCommand } from "@overseer/harness";
import { isPoolName, POOL_NAME_EXPECTED, type RunJob, type SandboxDriverName } from "@overseer/run-contract";
import { defaultWorkerId, WORKER_DEFAULTS } from "@overseer/settings";
import type { AgentCliInstall } from "./agent-cli-cache.ts";
import type { RunPaths } from "./run-context.ts";
import type { ImageSource, RunImage } from "./run-image.ts";

/**
 * How a worker process behaves. Every field but the data directory and the sandbox has a
 * default (`WORKER_DEFAULTS` of `@overseer/settings`, whose values the settings share).
 */
export interface WorkerServiceOptions {
  /** Name in heartbeats, runs and logs. Default `<hostname>-<pid>`. */
  id?: string;
  /** Runs at once in this process, whatever pools they come from. Default 2. */
  concurrency?: number;
  /** The worker pools whose run queues this process consumes (one slot budget for all). Default `["default"]`. */
  pools?: readonly string[];
  dataDir: string;
  /** BullMQ key prefix. Default `overseer`. */
  prefix?: string;
  /** Heartbeat period. Default 5000 ms. */
  heartbeatIntervalMs?: number;
  /** BullMQ job lock, renewed while a run lasts; a dead worker's runs are redelivered once it lapses. Default 30000 ms. */
  lockDurationMs?: number;
  /** How often the locks of running jobs are renewed; below `lockDurationMs`. Default 10000 ms, at most a third of a shorter lock. */
  lockRenewMs?: number;
  /** How often jobs with a lapsed lock (dead or frozen worker) are looked for. Default 5000 ms. */
  stalledIntervalMs?: number;
  /** Redeliveries after worker deaths before a job fails. Default 3. */
  maxStalledCount?: number;
  /** Skip the pre-checkout fetch of a new task when the mirror is this fresh (0 always fetches). Default 5000 ms. */
  mirrorFreshMs?: number;
  /** SIGTERM to SIGKILL of a run's process group. Default 5000 ms. */
  killGraceMs?: number;
  /** Run output kept per run. Default 1048576 bytes. */
  maxOutputBytes?: number;
  /** JSON bytes of a run's transcript kept; the oldest entries go first. Default 4 MiB. */
  maxTranscriptBytes?: number;
  /** Disk a run may add to its checkout, in bytes (a project's `sandbox.disk_mb` may only lower it). Default 2048 MiB. */
  diskLimitBytes?: number;
  /** Pause between two disk measurements of a running run. Default 250 ms. */
  diskCheckMs?: number;
  /** Files and directories a run may add to its checkout. Default 100000. */
  maxFiles?: number;
  /** Bound of each host-side git step of a run (add, commit, checkout, merge). Default 120000 ms. */
  gitTimeoutMs?: number;
  /** Objects a push to a local remote copies itself at most (@overseer/git local-push.ts); 0: always `git push`. Default 1000. */
  localPushMaxObjects?: number;
  /**
   * Niceness (0–19) of the processes this worker starts for its runs (git, the agent, hooks) and
   * of its process spawner, set process-wide when the service starts. Default 10.
   */
  runNice?: number;
  /** Pause between two usage reports of a running run (sent only when it changed); 0: only at the end. Default 5000 ms. */
  usageReportMs?: number;
  /** Retries in a row of a rate limit or an unreachable gateway, as the CLI reports them, after which a run is ended. Default 5. */
  cliRetryLimit?: number;
  /** On stop, how long running runs may go on before they are aborted and handed back. Default 30000 ms. */
  drainMs?: number;
  /** Sandbox driver name, for heartbeats. */
  sandboxName: SandboxDriverName;
  /** True when runs execute without isolation (`none`): shown loudly everywhere. */
  unsafe: boolean;
  sandboxFor(job: RunJob, paths: RunPaths, image?: RunImage | null): Promise<WrapCommand | undefined>;
  /** The worker's image cache for runs of projects with `sandbox.image` (run-image.ts). Default: none (such runs are refused). */
  imageFor?: ImageSource;
  /** Installs the agent CLI of a repository's `.overseer/environment.yml` (agent-cli-cache.ts). Default: none (such runs are refused). */
  agentCliFor?(pkg: string, digest: string | null): Promise<AgentCliInstall>;
  /** Why a job's project asks for a sandbox driver this worker cannot honour (run-context.ts), or null. Default: never. */
  sandboxRefusal?(job: RunJob): string | null;
  /**
   * An operator asked this worker to drain (`overseer workers drain`, seen at a heartbeat): the
   * process's own graceful stop (worker-main: as on SIGTERM). Called once. Default: none (the
   * service owner decides; tests call `stop()`).
   */
  onDrainRequested?(): void;
  /** The driver a job's runs use, recorded on the run. Default: `sandboxName`. */
  sandboxDriverFor?(job: RunJob): SandboxDriverName;
}

/** Every option after defaults: what `WorkerService` accepts. */
export type ResolvedWorkerOptions = Readonly<
  Required<Omit<WorkerServiceOptions, "imageFor" | "agentCliFor" | "sandboxDriverFor">> &
    Pick<WorkerServiceOptions, "imageFor" | "agentCliFor" | "sandboxDriverFor">
>;

type WorkerDefaultKey = Exclude<
  keyof WorkerServiceOptions,
  | "id"
  | "dataDir"
  | "sandboxName"
  | "unsafe"
  | "sandboxFor"
  | "sandboxRefusal"
  | "sandboxDriverFor"
  | "onDrainRequested"
  | "imageFor"
  | "agentCliFor"
>;

/** Each number option and the least value it accepts. */
const MINIMA: Readonly<Record<Exclude<WorkerDefaultKey, "prefix" | "pools">, number>> = Object.freeze({
  concurrency: 1,
  heartbeatIntervalMs: 1,
  lockDurationMs: 1,
  lockRenewMs: 1,
  stalledIntervalMs: 1,
  maxStalledCount: 0,
  mirrorFreshMs: 0,
  killGraceMs: 0,
  maxOutputBytes: 1024,
  maxTranscriptBytes: 1024,
  diskLimitBytes: 1,
  diskCheckMs: 1,
  maxFiles: 1,
  gitTimeoutMs: 1,
  localPushMaxObjects: 0,
  runNice: 0,
  usageReportMs: 0,
  cliRetryLimit: 1,
  drainMs: 0,
});

/**
 * Merges options over `WORKER_DEFAULTS` once and checks them right after; an error names the
 * key, the rule and the value received. Without `lockRenewMs`, a short `lockDurationMs` is
 * renewed three times per lock (as the defaults are) rather than at the default.
 */
export function resolveWorkerOptions(options: WorkerServiceOptions): ResolvedWorkerOptions {
  const defined = Object.fromEntries(
    Object.entries(options).filter(([, v]) => v !== undefined),
  ) as WorkerServiceOptions;
  const lockDurationMs = defined.lockDurationMs ?? WORKER_DEFAULTS.lockDurationMs;
  const resolved: ResolvedWorkerOptions = Object.freeze({
    ...WORKER_DEFAULTS,
    id: defaultWorkerId(),
    lockRenewMs: Math.min(WORKER_DEFAULTS.lockRenewMs, Math.floor(lockDurationMs / 3)),
    sandboxRefusal: () => null,
    onDrainRequested: () => undefined,
    ...defined,
  });
  for (const [key, min] of Object.entries(MINIMA) as [keyof typeof MINIMA, number][]) {
    const value = resolved[key];
    if (!Number.isInteger(value) || value < min)
      throw new RangeError(`${key} must be an integer of at least ${min}, received ${String(value)}`);
  }
  if (resolved.runNice > 19) throw new RangeError(`runNice must be at most 19, received ${resolved.runNice}`);
  if (resolved.lockRenewMs >= resolved.lockDurationMs)
    throw new RangeError(
      `lockRenewMs must be below lockDurationMs (${resolved.lockDurationMs}), received ${resolved.lockRenewMs}`,
    );
  if (resolved.dataDir === "") throw new RangeError('dataDir must be a directory path, received ""');
  if (resolved.pools.length === 0 || !resolved.pools.every(isPoolName))
    throw new RangeError(
      `pools must be one or more pool names (${POOL_NAME_EXPECTED}), received ${JSON.stringify(resolved.pools)}`,
    );
  return resolved;
}
