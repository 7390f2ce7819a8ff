/**
 * A stateless worker process: `concurrency` slots, each running one run job at a time.
 *
 * Delivery is at-least-once. A job is taken with a BullMQ lock that this process renews
 * (every `lockRenewMs`) while the run lasts; if the process dies or freezes, the lock lapses
 * after `lockDurationMs` and the next stalled check of any live worker (every
 * `stalledIntervalMs`) redelivers the job, which starts again from a fresh checkout and
 * reports its new start (Postgres records the redelivery). A run's result is reported to the
 * results queue under a job id derived from the run id before the run job completes, so a
 * redelivered job whose result already exists is skipped, and the coordinator applies each
 * result once (idempotent by run id).
 *
 * Fencing: a delivery acts only while it owns the job. Before any git side effect (commit,
 * push, landing) and before reporting the result, the worker checks that the job's lock
 * still carries this delivery's token; a worker that froze past its lock (SIGSTOP, a long
 * pause) and resumed after the run was redelivered therefore drops its late outcome instead
 * of pushing, landing or reporting it. A failed lock renewal aborts the run at once.
 *
 * Cancellation: the worker subscribes to the cancel channel of each run it holds (and only
 * those: its cost does not grow with the fleet's events); a `run.cancelled` event there aborts
 * that run (its process group is killed) and the job ends there,
 * completed with nothing reported (the cancel already ended the run in Postgres), whatever
 * the abort interrupted: never a failure that BullMQ would retry.
 *
 * The run fence (run-fence.ts): Postgres, not the job lock, decides whether a run still
 * counts. A delivery whose run is no longer live there (cancelled, ended, its task done or
 * cancelled, its project stopped) does nothing, and every push goes through the fence, which
 * pushes only while the run is live. A cancel event this worker missed therefore stops the
 * run at its first ref move, on any retry, on any worker.
 *
 * Shutdown (SIGTERM) drains: the worker takes no new job, lets its running runs finish for up
 * to `drainMs`, then aborts the rest and hands each job straight back to the queue (moved back
 * to waiting with its lock token, not failed, so no attempt is spent and another worker takes
 * it at once instead of after a lock stall). A handed-back run reports nothing; its next
 * delivery reports its own start and result (the coordinator applies each result once).
 */
import { hostname } from "node:os";
import { RunNotLiveError } from "@overseer/db";
import { disposeKeptAdmins, RepoMirror } from "@overseer/git";
import { formatZodIssues } from "@overseer/input-errors";
import { useRunNice } from "@overseer/process";
import {
  deliveredRun,
  type LiveChannel,
  listenForBullmqErrors,
  queueKeyPrefix,
  type Redis,
  type RunQueues,
  runJobId,
  runQueueName,
  subscribeWhenReady,
  type WorkerHeartbeat,
  type WorkerRegistry,
} from "@overseer/queue";
import { RUN_JOB_VERSION, type RunJob, type RunQueuePayload, runJobSchema } from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";
import type { RunTracing } from "@overseer/telemetry";
import { type Job, UnrecoverableError, WaitingError } from "bullmq";
import { LiveLogBatcher } from "./live-log-batcher.ts";
import { PoolWorker } from "./pool-worker.ts";
import { disposeRunDirs } from "./run-dirs.ts";
import {
  executeRun,
  type RunExecutorDeps,
  RunOwnershipLostError,
  WorkerShutdownError,
} from "./run-executor.ts";
import type { RunFence } from "./run-fence.ts";
import { RunTraceRecorders } from "./run-trace-recorder.ts";
import { SlotGate } from "./slot-gate.ts";
import type { ResolvedWorkerOptions } from "./worker-options.ts";

export interface WorkerServiceDeps {
  /** Blocking connection for the BullMQ worker. */
  workerConnection: Redis;
  /** Connection for pub/sub subscriptions. */
  subscriber: Redis;
  queues: RunQueues;
  live: LiveChannel;
  registry: WorkerRegistry;
  logger: Logger;
  /** Postgres's word on each run before it acts and around each push (run-fence.ts). */
  fence?: RunFence;
  /** The runs' traces (packages/telemetry); absent or null: no trace is recorded. */
  tracing?: RunTracing | null;
}

export class WorkerService {
  readonly id: string;
  /** One BullMQ Worker per pool served, all sharing `slots`. */
  private workers: PoolWorker[] = [];
  private readonly slots: SlotGate;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private readonly mirrors = new Map<string, RepoMirror>();
  private readonly current = new Map<
    string,
    {
      job: RunJob;
      /** The delivered job's id (`runJobId`, or the former `run-<id>` of a job an older coordinator queued). */
      jobId: string;
      /** BullMQ lock token of this delivery: the job is ours while its lock holds it. */
      token: string;
      since: number;
      abort: AbortController;
      cancelled: boolean;
      /** The lock could not be renewed: the job may already run elsewhere. */
      lockLost: boolean;
      /** Aborted by a shutdown whose drain ran out: the job goes back to the queue. */
      handBack: boolean;
    }
  >();
  private readonly startedAt = Date.now();
  private readonly background = new Set<Promise<unknown>>();
  private readonly executorDeps: RunExecutorDeps;

  /** Takes options resolved once by `resolveWorkerOptions`. */
  constructor(
    private readonly deps: WorkerServiceDeps,
    private readonly options: ResolvedWorkerOptions,
  ) {
    this.id = options.id;
    this.slots = new SlotGate(options.concurrency);
    this.traces = new RunTraceRecorders(deps.tracing ?? null, deps.logger);
    const batchers = new Map<string, LiveLogBatcher>();
    this.executorDeps = {
      workerId: this.id,
      dataDir: options.dataDir,
      logger: deps.logger,
      killGraceMs: options.killGraceMs,
      maxOutputBytes: options.maxOutputBytes,
      maxTranscriptBytes: options.maxTranscriptBytes,
      publishTranscript: (job, entries, kept) =>
        deps.live.publishTranscript(job.projectId, job.runId, entries, kept),
      diskLimitBytes: options.diskLimitBytes,
      diskCheckMs: options.diskCheckMs,
      maxFiles: options.maxFiles,
      mirrorFor: (job) => this.mirrorFor(job),
      mirrorFreshness: { lastSync: new Map(), freshMs: options.mirrorFreshMs },
      defer: (work) => {
        this.background.add(work);
        void work.finally(() => this.background.delete(work));
      },
      sandboxFor: (job, paths, image) => options.sandboxFor(job, paths, image),
      ...(options.imageFor ? { imageFor: options.imageFor } : {}),
      ...(options.agentCliFor ? { agentCliFor: options.agentCliFor } : {}),
      sandboxRefusal: (job) => options.sandboxRefusal(job),
      sandboxDriverFor: (job) => options.sandboxDriverFor?.(job) ?? options.sandboxName,
      confirmOwnership: (job) => this.confirmOwnership(job.runId),
      // A usage report of a run this delivery no longer owns still counts: the spend is real.
      reportUsage: (job, usage) => {
        this.usageReports += 1;
        return this.deps.queues.reportResult({
          v: RUN_JOB_VERSION,
          kind: "run-usage",
          runId: job.runId,
          projectId: job.projectId,
          workerId: this.id,
          seq: this.usageReports,
          usage,
        });
      },
      usageReportMs: options.usageReportMs,
      cliRetryLimit: options.cliRetryLimit,
      ...(deps.fence ? { fence: deps.fence } : {}),
      onOutput: (job, chunk) => {
        this.traces.write(job, chunk);
        let batcher = batchers.get(job.runId);
        if (!batcher) {
          batcher = new LiveLogBatcher(deps.live, job.runId, this.executorDeps.maxOutputBytes);
          batchers.set(job.runId, batcher);
        }
        batcher.push(chunk);
      },
    };
    this.flushLog = async (runId) => {
      await batchers.get(runId)?.flush();
      batchers.delete(runId);
    };
  }

  private readonly flushLog: (runId: string) => Promise<void>;
  private readonly traces: RunTraceRecorders;
  /** Usage reports sent (their job ids): from the clock, so a restarted worker never reuses one. */
  private usageReports = Date.now();

  async start(): Promise<void> {
    const { logger } = this.deps;
    // Every process a run starts from now on (git, the agent, hooks) runs below the services.
    useRunNice(this.options.runNice);
    if (this.options.unsafe) {
      logger.warn(
        { worker: this.id },
        "UNSAFE: runs execute WITHOUT a sandbox (OVERSEER_SANDBOX=none); agents have this worker's rights",
      );
    }
    this.deps.subscriber.on("message", (channel) => this.onCancel(channel));
    // One consumer per pool's queue (BullMQ gives each its own blocking connection), one slot
    // budget for all.
    this.workers = this.options.pools.map((pool) => {
      const worker = new PoolWorker(
        runQueueName(pool),
        (job, token) => this.process(job, token, pool),
        this.deps.queues.runJobPolicy,
        {
          connection: this.deps.workerConnection,
          prefix: queueKeyPrefix(this.options.prefix),
          concurrency: this.options.concurrency,
          lockDuration: this.options.lockDurationMs,
          lockRenewTime: this.options.lockRenewMs,
          stalledInterval: this.options.stalledIntervalMs,
          maxStalledCount: this.options.maxStalledCount,
          autorun: true,
        },
        this.slots,
      );
      listenForBullmqErrors(worker, this.deps.workerConnection, logger, `${runQueueName(pool)} worker`);
      worker.on("lockRenewalFailed", (jobIds) => this.onLockLost(jobIds));
      worker.on("failed", (job, error) =>
        logger.warn({ jobId: job?.id, pool, err: error }, "run job failed"),
      );
      return worker;
    });
    await this.beat();
    this.heartbeatTimer = setInterval(() => void this.beat(), this.options.heartbeatIntervalMs);
    this.heartbeatTimer.unref();
    logger.info(
      {
        worker: this.id,
        concurrency: this.options.concurrency,
        pools: this.options.pools,
        sandbox: this.options.sandboxName,
      },
      "worker started",
    );
  }

  /**
   * Drains, then stops: takes no new job, lets running runs finish within `drainMs` (default
   * the `drainMs` option), then aborts the rest and hands their jobs back to the queue; removes
   * the heartbeat last. `handBackNow()` cuts a drain short (a second signal).
   */
  async stop(drainMs = this.options.drainMs): Promise<void> {
    this.draining = true;
    // The heartbeat says so at once: a pool whose every worker drains shows its projects waiting.
    void this.beat();
    this.slots.close();
    const closed = Promise.all(this.workers.map((worker) => worker.close())).then(() => undefined);
    if (this.current.size > 0) {
      this.deps.logger.info(
        { worker: this.id, running: [...this.current.keys()], drainMs },
        "draining: no new jobs; waiting for running runs",
      );
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, drainMs);
      });
      const handedBack = new Promise<void>((resolve) => {
        this.drainCut = resolve;
      });
      await Promise.race([closed, deadline, handedBack]);
      clearTimeout(timer);
      this.handBackNow();
    }
    await closed;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    await Promise.allSettled([...this.background]);
    await Promise.all([disposeRunDirs(), disposeKeptAdmins()]).catch(() => undefined);
    await this.deps.subscriber.unsubscribe().catch(() => undefined);
    await this.deps.registry.remove(this.id).catch(() => undefined);
    this.deps.logger.info({ worker: this.id }, "worker stopped");
  }

  private drainCut: (() => void) | null = null;
  /** An operator's drain request was seen (and passed to `onDrainRequested`). */
  private drainAsked = false;
  private handingBack = false;
  /** Set by stop(): a job BullMQ still delivers (its fetch was already waiting) goes straight back. */
  private draining = false;

  /** Aborts every running run now and hands its job back to the queue (the end of a drain). */
  handBackNow(): void {
    this.handingBack = true;
    this.drainCut?.();
    for (const entry of this.current.values()) {
      if (entry.cancelled || entry.lockLost || entry.handBack) continue;
      this.deps.logger.warn(
        { runId: entry.job.runId },
        "drain time is up; aborting the run and handing its job back",
      );
      entry.handBack = true;
      entry.abort.abort();
    }
  }

  /**
   * Runs one delivered job in a slot of the shared budget, or hands it straight back when every
   * slot is taken (another pool took the last one first; slot-gate.ts).
   */
  private async process(job: Job, token: string | undefined, pool: string): Promise<void> {
    if (!this.slots.tryTake()) {
      if (!token) throw new UnrecoverableError(`run job ${job.id} was delivered without a lock token`);
      await job.moveToWait(token);
      throw new WaitingError(`run job ${job.id} left for later: every slot of this worker is taken`);
    }
    try {
      await this.processInSlot(job, token, pool);
    } finally {
      this.slots.release();
    }
  }

  private async processInSlot(job: Job, token: string | undefined, pool: string): Promise<void> {
    const { payload, error } = deliveredRun(job, pool);
    if (!payload) throw new UnrecoverableError(`malformed run job ${job.id}: ${error}`);
    // Both reads at once (Redis and Postgres): redelivered after this run's result was already
    // reported (a crash between the two), or a retried or redelivered job of a run Postgres no
    // longer counts: nothing to do. A reported run's job read may fail unheard.
    const reading = this.liveJob(payload);
    reading.catch(() => undefined);
    if (await this.deps.queues.hasResult(payload.runId)) return;
    if (!token) throw new UnrecoverableError(`run job ${job.id} was delivered without a lock token`);
    const live = await reading;
    if (live.refusal !== null) {
      this.deps.logger.info(
        { runId: payload.runId, reason: live.refusal },
        "run is no longer live; its job ends here",
      );
      return;
    }
    const run = live.job;
    if (this.draining) {
      await job.moveToWait(token);
      throw new WaitingError(`run ${run.runId} left for another worker: this one is draining`);
    }
    const abort = new AbortController();
    const entry = {
      job: run,
      jobId: job.id ?? runJobId(run.runId),
      token,
      since: Date.now(),
      abort,
      cancelled: false,
      lockLost: false,
      handBack: false,
    };
    this.current.set(run.runId, entry);
    // A cancel published before this subscription is missed here; the fence stops the run. The
    // subscription travels while the checkout starts (nothing before the agent's spawn needs
    // it); the unsubscribe below goes on the same connection after it.
    const cancelChannel = this.deps.live.cancelChannel(run.runId);
    const watching = subscribeWhenReady(this.deps.subscriber, cancelChannel).catch((error) =>
      this.deps.logger.warn({ err: error, runId: run.runId }, "cannot watch the run's cancel"),
    );
    if (this.handingBack) {
      // Delivered as the drain ended: straight back to the queue.
      entry.handBack = true;
      abort.abort();
    }
    try {
      // Off the critical path: the start notice travels while the checkout is prepared, once
      // the run's cancel is watched, so a cancel of a run seen running is always heard here.
      const at = Date.now();
      const started = watching
        .then(() =>
          this.deps.queues.reportResult({
            v: RUN_JOB_VERSION,
            kind: "run-started",
            runId: run.runId,
            projectId: run.projectId,
            workerId: this.id,
            at,
          }),
        )
        .catch((error) =>
          this.deps.logger.warn({ err: error, runId: run.runId }, "run-started notice failed"),
        );
      this.traces.begin(run);
      const result = await executeRun(run, this.executorDeps, abort.signal);
      await started;
      // Cancelled while it ran: the cancel ended the run; whatever it made of it counts for nothing.
      if (entry.cancelled) return;
      // The live log's tail and the ownership check are in flight together (one wait, not two);
      // the result goes out after both, only while this delivery still owns the run.
      await Promise.all([this.flushLog(run.runId), this.confirmOwnership(run.runId)]);
      await this.deps.queues.reportResult(result);
      this.traces.finish(run, result);
    } catch (error) {
      // A cancelled run is over: nothing to report (the cancel transition already ended it),
      // whatever the abort interrupted (checkout, hook, agent, landing check).
      if (entry.cancelled) return;
      if (error instanceof RunNotLiveError) {
        // The fence refused a push: Postgres no longer counts the run, nothing was moved.
        this.deps.logger.info({ runId: run.runId, reason: error.reason }, error.message);
        return;
      }
      if (error instanceof RunOwnershipLostError || entry.lockLost) {
        // The job is (or will be) redelivered: its new owner reports the outcome. Whatever
        // ended this delivery (the fence, or the abort after a failed lock renewal), finishing
        // the job from here fails on the lock, which leaves the job to its new owner.
        this.deps.logger.warn(
          { runId: run.runId, worker: this.id },
          "run ownership lost (this worker's job lock lapsed and the run was redelivered); its outcome is dropped",
        );
        throw new RunOwnershipLostError(run.runId);
      }
      if (entry.handBack) {
        // Whatever the abort interrupted (checkout, hook, agent): back to waiting with this
        // delivery's lock token. Not a failure (no attempt spent), and the next worker takes it
        // now rather than after the lock lapses.
        await job.moveToWait(token);
        throw new WaitingError(`run ${run.runId} handed back to the queue by a draining worker`);
      }
      if (error instanceof WorkerShutdownError) this.deps.logger.warn({ runId: run.runId }, error.message);
      throw error;
    } finally {
      this.current.delete(run.runId);
      await watching;
      await this.deps.subscriber.unsubscribe(cancelChannel).catch(() => undefined);
      this.traces.drop(run.runId);
      await this.flushLog(run.runId);
    }
  }

  /**
   * The job a delivery runs, or why it may not (the run fence): a reference is resolved with the
   * fence's one read (its job stored in Postgres); a whole job is checked by the fence as it is.
   */
  private async liveJob(
    payload: RunQueuePayload,
  ): Promise<{ refusal: string; job?: undefined } | { refusal: null; job: RunJob }> {
    const fence = this.deps.fence;
    if (payload.kind === "run") {
      const refusal = await fence?.refusal(payload);
      return refusal ? { refusal } : { refusal: null, job: payload };
    }
    if (!fence) {
      throw new UnrecoverableError(
        `run job ${payload.runId} is a reference to a job stored in Postgres, and this worker has no run fence to read it: give the worker DATABASE_URL`,
      );
    }
    const loaded = await fence.load(payload);
    if (loaded.refusal !== null) return loaded;
    const stored = runJobSchema.safeParse(loaded.job);
    if (!stored.success) {
      throw new UnrecoverableError(
        loaded.job === null
          ? `run ${payload.runId} is live but Postgres holds no job for it (run_jobs): its coordinator stores one before queueing; the reconcile sweep will record the failure`
          : `malformed stored job of run ${payload.runId}: ${formatZodIssues(stored.error.issues, loaded.job)}`,
      );
    }
    // The newest landing Postgres knows of, read with the job: the base the checkout may trust.
    const expectedBase = loaded.landedHead ?? stored.data.expectedBase ?? null;
    return { refusal: null, job: { ...stored.data, expectedBase } };
  }

  /** Throws `RunOwnershipLostError` unless this worker's delivery of the run still holds its job lock. */
  private async confirmOwnership(runId: string): Promise<void> {
    const entry = this.current.get(runId);
    if (
      !entry ||
      entry.lockLost ||
      !(await this.deps.queues.holdsRunLock(entry.jobId, entry.token, entry.job.pool))
    ) {
      if (entry) entry.lockLost = true;
      throw new RunOwnershipLostError(runId);
    }
  }

  /** BullMQ could not renew these jobs' locks: another worker may already run them, so stop. */
  private onLockLost(jobIds: string[]): void {
    for (const entry of this.current.values()) {
      if (!jobIds.includes(entry.jobId) || entry.lockLost) continue;
      this.deps.logger.warn({ runId: entry.job.runId }, "job lock lost; ending the run's process group");
      entry.lockLost = true;
      entry.abort.abort();
    }
  }

  /** A message on a held run's cancel channel: the run was cancelled, end its process group. */
  private onCancel(channel: string): void {
    const runId = this.deps.live.runOfCancelChannel(channel);
    const entry = runId === null ? undefined : this.current.get(runId);
    if (!entry || entry.cancelled) return;
    this.deps.logger.info({ runId }, "run cancelled by operator; ending its process group");
    entry.cancelled = true;
    entry.abort.abort();
  }

  private mirrorFor(job: RunJob): RepoMirror {
    let mirror = this.mirrors.get(job.projectId);
    if (!mirror) {
      mirror = new RepoMirror({
        dataDir: this.options.dataDir,
        projectId: job.projectId,
        remote: job.repo,
        gitTimeoutMs: this.options.gitTimeoutMs,
        localPushMaxObjects: this.options.localPushMaxObjects,
      });
      this.mirrors.set(job.projectId, mirror);
    }
    return mirror;
  }

  private async beat(): Promise<void> {
    const heartbeat: WorkerHeartbeat = {
      id: this.id,
      host: hostname(),
      pid: process.pid,
      slots: this.options.concurrency,
      pools: [...this.options.pools],
      draining: this.draining,
      sandbox: this.options.sandboxName,
      unsafe: this.options.unsafe,
      currentJobs: [...this.current.values()].map((c) => ({
        runId: c.job.runId,
        projectId: c.job.projectId,
        taskId: c.job.taskId,
        action: c.job.action,
        since: c.since,
      })),
      startedAt: this.startedAt,
      heartbeatAt: Date.now(),
    };
    const answer = await this.deps.registry
      .beat(heartbeat)
      .catch((error) => this.deps.logger.warn({ err: error }, "heartbeat failed"));
    // Once: a second SIGTERM would cut the drain short (handBackNow).
    if (answer?.drainRequested && !this.draining && !this.drainAsked) {
      this.drainAsked = true;
      this.deps.logger.info(
        { worker: this.id },
        "an operator asked this worker to drain (overseer workers drain)",
      );
      this.options.onDrainRequested();
    }
  }
}
