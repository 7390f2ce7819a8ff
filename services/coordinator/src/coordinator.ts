/**
 * The coordinator: the only writer of scheduling decisions.
 *
 *   leases ──► owned projects ──► scheduling pass (claim → build job → enqueue)
 *                   ▲                                   │
 *   NOTIFY ─────────┤                                   ▼
 *   results stream ─┴──◄── apply run result ◄── workers (BullMQ, stateless)
 *
 * Event-driven, so its cost grows with what changes, not with the projects it owns: a pass
 * runs after a transition this process applied that may make work runnable (a result, a
 * forge report, a budget pause; not its own claims or a run starting) unless claiming on the
 * state it committed would change nothing (pass-gate.ts), on a Postgres NOTIFY
 * from anyone else for an owned project (operator actions, task imports, other replicas),
 * when a retry backoff expires, and after a lease is won. Kicks coalesce: one pending pass
 * per project, never a queue of them. The notifications of its own commits carry its id and
 * are skipped. A low-rate sweep (default every 5 s) is only the safety net: it checks one
 * bounded batch of the active runs per round against Redis (two commands per run, by job
 * id), re-enqueues a run whose job vanished (flush, crash) and records runs whose job failed
 * for good.
 *
 * Several replicas may run; each project is scheduled only by its lease holder (rule 11).
 * Results may be applied by any replica: transitions are idempotent by run id and
 * protected by optimistic concurrency, so double delivery is harmless.
 */
import {
  type AppliedTransition,
  acquireLeases,
  type Db,
  type DroppedLease,
  existingTaskIds,
  LeaseLostError,
  NotFoundError,
  type NotificationListener,
  POSTGRES_NOTIFY_CHANNEL,
  type ProjectRow,
  parseNotifyPayload,
  recordUsageReport,
  releaseLeases,
  settleDroppedLeases,
} from "@overseer/db";
import type { Command } from "@overseer/domain";
import { formatZodIssues } from "@overseer/input-errors";
import type { LiveChannel, Redis, RunQueues } from "@overseer/queue";
import { type ResultMessage, type RunResult, resultMessageSchema } from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";
import { sanitizeValue } from "@overseer/task-files";
import type { RunTracing } from "@overseer/telemetry";
import { type ApplyCommandOptions, TransitionApplier } from "@overseer/transitions";
import type { ResolvedCoordinatorOptions } from "./coordinator-options.ts";
import { ForgeRunner } from "./forge/forge-runner.ts";
import { IntakeServices } from "./intake/intake-services.ts";
import { NotificationRunner } from "./notify/notification-runner.ts";
import { PassGate } from "./pass-gate.ts";
import { ProjectPolicies } from "./project-policy.ts";
import { ProjectRows } from "./project-rows.ts";
import { ProjectSerializer } from "./project-serializer.ts";
import { commandForResult } from "./result-command-mapper.ts";
import { ResultConsumer } from "./result-consumer.ts";
import { type ClaimJobs, RunEnqueuer } from "./run-enqueuer.ts";
import { RunReconciler } from "./run-reconciler.ts";
import { phaseTimeline, runReportOf } from "./run-report.ts";
import { appliedRunOf } from "./run-trace.ts";
import { budgetPauseCommand, claimCommand, settlesBy } from "./scheduling-rules.ts";
import { unapplicableResultCommand } from "./unapplicable-result.ts";

export interface CoordinatorDeps {
  db: Db;
  /** LISTEN/NOTIFY connection (reconnects by itself). */
  notifications: NotificationListener;
  /** Connection the forge worker and the results reader duplicate (they block). */
  workerConnection: Redis;
  queues: RunQueues;
  live: LiveChannel;
  logger: Logger;
  /** The runs' traces (packages/telemetry); absent or null: no trace is recorded. */
  tracing?: RunTracing | null;
}

export class Coordinator {
  readonly id: string;
  private readonly leaseTtlMs: number;
  private readonly reconcileIntervalMs: number;
  private readonly transitions: TransitionApplier;
  private readonly owned = new Set<string>();
  private readonly serializer: ProjectSerializer;
  /** Each project's policy, parsed once per project version (jobs and results share it). */
  private readonly policies = new ProjectPolicies();
  /** The owned projects' rows, kept exact in memory (project-rows.ts). */
  readonly rows: ProjectRows;
  /** Which own commits call for a pass, and the retry backoffs' wake timers (pass-gate.ts). */
  readonly gate: PassGate;
  /** Projects whose last pass failed: asked again after a reconcile interval. */
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  /** Host-side pull request work of pull_request projects (forge/forge-runner.ts). */
  private readonly forge: ForgeRunner;
  private readonly notify: NotificationRunner; // outbox deliveries (notify/notification-runner.ts)
  private readonly intake: IntakeServices; // tracker intake and two-way status (intake/)
  /** From a claimed run to its job in Redis (run-enqueuer.ts). */
  private readonly enqueuer: RunEnqueuer;
  /** Reads and applies the run results (result-consumer.ts). */
  private readonly results: ResultConsumer;
  private leaseTimer: NodeJS.Timeout | null = null;
  private reconcileTimer: NodeJS.Timeout | null = null;
  private resultRetryTimer: NodeJS.Timeout | null = null;
  /** The safety net: active runs checked against Redis (run-reconciler.ts). */
  private readonly reconciler: RunReconciler;
  private unlisten: (() => Promise<void>) | null = null;
  private stopped = false;
  private leaseRenewalPending = false;
  /** Owned projects whose claim found their lease lapsed: kicked once a renewal extends it. */
  private readonly lapsed = new Set<string>();

  /** Takes options resolved once by `resolveCoordinatorOptions`. */
  constructor(
    private readonly deps: CoordinatorDeps,
    private readonly options: ResolvedCoordinatorOptions,
  ) {
    this.id = options.id;
    this.leaseTtlMs = options.leaseTtlMs;
    this.reconcileIntervalMs = options.reconcileIntervalMs;
    this.rows = new ProjectRows(deps.db, (projectId) => this.owned.has(projectId));
    this.gate = new PassGate(this.rows, this.policies, (projectId) => this.kick(projectId));
    this.transitions = new TransitionApplier(
      { db: deps.db, live: deps.live, queues: deps.queues, logger: deps.logger },
      {
        conflictRetries: options.conflictRetries,
        origin: options.id,
        // Its own commits' NOTIFY is skipped: the pass they call for is asked for here.
        onCommit: (projectId, result, overlapped) => {
          this.rows.noteCommit(projectId, result);
          this.gate.afterCommit(projectId, result, overlapped);
        },
      },
    );
    this.enqueuer = new RunEnqueuer({
      ...deps,
      policies: this.policies,
      apply: (projectId, command) => this.apply(projectId, command),
    });
    this.serializer = new ProjectSerializer((projectId, error) => this.onPassError(projectId, error));
    this.reconciler = new RunReconciler(
      { db: deps.db, queues: deps.queues, logger: deps.logger },
      {
        owner: options.id,
        batch: options.reconcileBatch,
        isOwned: (projectId) => !this.stopped && this.owned.has(projectId),
        inTurn: (projectId, fn) => {
          void this.serializer.run(projectId, fn).catch((error) => this.onPassError(projectId, error));
        },
        enqueueRun: (project, state, run) => this.enqueuer.enqueueRun(project, state, run),
        apply: (projectId, command) => this.apply(projectId, command).then(() => undefined),
        retryOf: (project) => this.policies.of(project).retry,
      },
    );
    this.forge = new ForgeRunner(
      {
        db: deps.db,
        transitions: this.transitions,
        queue: deps.queues.forge,
        workerConnection: deps.workerConnection,
        policies: this.policies,
        logger: deps.logger,
      },
      {
        prefix: options.prefix,
        concurrency: options.forgeConcurrency,
        retryBaseMs: options.forgeRetryBaseMs,
        githubWriteIntervalMs: options.githubWriteIntervalMs,
        dashboardUrl: options.dashboardUrl,
      },
    );
    this.notify = new NotificationRunner({ ...deps, queue: deps.queues.notify }, options);
    this.intake = new IntakeServices(
      { ...deps, mergedOnForge: (projectId, taskId) => this.forge.recordMergeIfMerged(projectId, taskId) },
      this.transitions,
      options,
    );
    this.results = new ResultConsumer(
      deps.queues.results,
      () => deps.workerConnection.duplicate(),
      (message) => this.onResultMessage(message),
      deps.logger,
      {
        consumer: options.id,
        concurrency: options.resultConcurrency,
        retryAfterMs: options.resultRetryMs,
      },
    );
  }

  get ownedProjects(): readonly string[] {
    return [...this.owned].sort();
  }

  async start(): Promise<void> {
    const log = this.deps.logger;
    const listener = await this.deps.notifications.listen(
      POSTGRES_NOTIFY_CHANNEL,
      (payload) => this.onNotify(payload),
      // Runs again after the LISTEN connection came back: notifications sent while it was
      // down are lost, so every owned project gets a pass.
      () => this.kickAll(),
    );
    this.unlisten = () => listener.unlisten();
    await this.renewLeases();
    this.results.start();
    this.resultRetryTimer = setInterval(() => void this.results.retryStale(), this.options.resultRetryMs);
    this.forge.start();
    await this.notify.start();
    await this.intake.start();
    this.leaseTimer = setInterval(() => void this.renewLeases(), Math.floor(this.leaseTtlMs / 3));
    this.reconcileTimer = setInterval(() => void this.reconciler.sweep(), this.reconcileIntervalMs);
    log.info({ coordinator: this.id, owned: this.ownedProjects }, "coordinator started");
  }

  /**
   * Stops taking results and passes and hands back what it holds: waits up to `inFlightMs` for
   * the results, forge jobs and passes in flight (a result still applying then is left
   * unacknowledged and taken again by another replica; it applies once), then releases its
   * leases, so another replica takes its projects at once. Default: waits for everything.
   */
  async stop(inFlightMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.stopped = true;
    const deadline = Date.now() + inFlightMs;
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    if (this.resultRetryTimer) clearInterval(this.resultRetryTimer);
    for (const t of this.retryTimers.values()) clearTimeout(t);
    this.gate.stop();
    this.retryTimers.clear();
    await this.unlisten?.().catch(() => undefined);
    if (!(await this.results.stop(deadline))) {
      this.deps.logger.warn(
        { coordinator: this.id },
        "results still applying at the end of the grace are left to another replica",
      );
    }
    await settlesBy(this.forge.stop(), deadline);
    await settlesBy(this.notify.stop(), deadline);
    await settlesBy(this.intake.stop(), deadline);
    await settlesBy(this.serializer.idle(), deadline);
    await releaseLeases(this.deps.db, this.id).catch(() => undefined);
    this.owned.clear();
    this.deps.logger.info({ coordinator: this.id }, "coordinator stopped");
  }

  /**
   * A transition committed by someone else (its own commits carry this replica's id and were
   * acted on at commit): an owned project gets a pass; another project may just have been
   * started (never by a coordinator), so leases are renewed soon.
   */
  private onNotify(payload: string): void {
    const { projectId, origin } = parseNotifyPayload(payload);
    if (origin === this.id) return;
    this.rows.drop(projectId);
    if (this.owned.has(projectId)) this.kick(projectId);
    else if (origin === null) this.renewLeasesSoon();
  }

  /** Requests a scheduling pass for an owned project. */
  kick(projectId: string): void {
    if (this.stopped || !this.owned.has(projectId)) return;
    this.serializer.kick(projectId, () => this.schedulePass(projectId));
  }

  /** Waits until no scheduling pass or result application is in flight (tests, shutdown). */
  idle(): Promise<void> {
    return this.serializer.idle();
  }

  // -------------------------------------------------------------------------------------
  // Leases

  async renewLeases(): Promise<void> {
    if (this.stopped) return;
    try {
      const now = new Set(
        await acquireLeases(this.deps.db, this.id, this.leaseTtlMs, this.options.maxProjects ?? undefined),
      );
      await this.settleDropped([...this.owned].filter((projectId) => !now.has(projectId)));
      for (const projectId of this.lapsed) if (now.has(projectId)) this.kick(projectId);
      this.lapsed.clear();
      for (const projectId of now) {
        if (this.owned.has(projectId)) continue;
        this.owned.add(projectId);
        this.deps.logger.info({ projectId, coordinator: this.id }, "lease acquired");
        void this.serializer
          .run(projectId, () => this.reconciler.reconcile(projectId))
          .then(() => this.kick(projectId));
      }
    } catch (error) {
      this.deps.logger.error({ err: error }, "lease renewal failed");
    }
  }

  /**
   * A NOTIFY about a project this replica does not own may mean a project was just started:
   * try to lease it, at most once per 250 ms however many notifications arrive.
   */
  private renewLeasesSoon(): void {
    if (this.stopped || this.leaseRenewalPending) return;
    this.leaseRenewalPending = true;
    setTimeout(() => {
      this.leaseRenewalPending = false;
      void this.renewLeases();
    }, 250).unref();
  }

  private async settleDropped(projectIds: readonly string[]): Promise<void> {
    for (const lease of await settleDroppedLeases(this.deps.db, this.id, projectIds)) this.dropProject(lease);
  }

  /**
   * A project whose lease was not kept (by the renewal, or found gone by a claim): paused,
   * stopped or completed is a clean release (its lease was just deleted); an active project
   * another replica leased is a loss, warned about with the project and the new holder named.
   * Still ours and active (resumed between the renewal and this check): kept, the next
   * renewal extends it.
   */
  private dropProject(lease: DroppedLease): void {
    const { projectId } = lease;
    if (lease.status === "active" && lease.holder === this.id) return;
    this.owned.delete(projectId);
    this.policies.forget(projectId);
    this.rows.drop(projectId);
    this.gate.forget(projectId);
    clearTimeout(this.retryTimers.get(projectId));
    this.retryTimers.delete(projectId);
    const log = { projectId, coordinator: this.id, status: lease.status, holder: lease.holder };
    if (lease.status !== "active") {
      this.deps.logger.info(log, `lease released: project ${projectId} is ${lease.status ?? "deleted"}`);
    } else {
      const to = lease.holder === null ? "its lease expired before renewal" : `now leased by ${lease.holder}`;
      this.deps.logger.warn(
        log,
        `lease lost: project ${projectId} is ${to}; this replica stops scheduling it`,
      );
    }
  }

  // -------------------------------------------------------------------------------------
  // Scheduling

  private async schedulePass(projectId: string): Promise<void> {
    if (!this.owned.has(projectId)) return;
    const project = await this.rows.get(projectId);
    if (await this.pauseIfOverBudget(project)) return;
    // The claim's transaction builds and stores its runs' jobs too (run-enqueuer.ts).
    const built: ClaimJobs = new Map();
    const createdBy = (applied: AppliedTransition) =>
      applied.changes.runs.filter((r) => applied.changes.createdRunIds.has(r.id));
    const queued = new Set<string>();
    const claimed = await this.apply(projectId, claimCommand(this.policies, project), {
      leaseOwner: this.id,
      runJobs: this.enqueuer.jobsOfClaim(project, built),
      // The jobs the claim stored are queued as it commits, beside its live events: a run's
      // pick-up waits for no publication.
      onCommitted: async (applied) => {
        for (const run of createdBy(applied)) {
          const build = built.get(run.id);
          if (!build?.ok) continue;
          await this.enqueuer.queueClaimed(projectId, run, build);
          queued.add(run.id);
        }
      },
    });
    if (!claimed) return;
    // The claim's own update of the project row (a run counts a session) is its freshest read.
    const current = claimed.projectRow ?? project;
    let freed = false;
    for (const run of createdBy(claimed)) {
      if (queued.has(run.id)) continue;
      const build = built.get(run.id);
      const number = claimed.actionRunNumbers?.get(run.id);
      const failed = build
        ? await this.enqueuer.queueClaimed(projectId, run, build)
        : await this.enqueuer.enqueueRun(current, claimed.state, run, number);
      freed = failed || freed;
    }
    // The forge's bookkeeping (pull_request mode) after the runs are queued: no run waits for it.
    const policy = this.policies.ifValid(project);
    if (policy.ok) {
      await this.forge
        .reconcile(project, claimed.state, policy.policy)
        .catch((error) => this.deps.logger.warn({ err: error, projectId }, "forge reconcile failed"));
    }
    this.gate.armWakeTimer(projectId, claimed.state);
    if (freed) this.kick(projectId);
  }

  /** An active project whose spend reached a bound is paused (budgetPauseCommand); nothing is claimed. */
  private async pauseIfOverBudget(project: ProjectRow): Promise<boolean> {
    const pause = budgetPauseCommand(project, this.policies.budgetsOf(project), this.id);
    if (pause) await this.apply(project.id, pause);
    return pause !== null;
  }

  /** Whether the project's row in memory bounds no spend (neither budget_usd nor budget_tokens). */
  private unbudgeted(projectId: string): boolean {
    const row = this.rows.cached(projectId);
    if (!row) return false;
    const { budgetUsd, budgetTokens } = this.policies.budgetsOf(row);
    return budgetUsd === null && budgetTokens === null;
  }

  // -------------------------------------------------------------------------------------
  // Results

  private async onResultMessage(data: unknown): Promise<void> {
    // Run output boundary: no NUL or lone surrogate reaches Postgres, whatever the worker sent.
    const message = sanitizeValue(data);
    const parsed = resultMessageSchema.safeParse(message);
    if (!parsed.success) {
      this.deps.logger.error(
        { problems: formatZodIssues(parsed.error.issues, message) },
        "dropping malformed result message",
      );
      return;
    }
    try {
      await this.applyResultMessage(parsed.data);
    } catch (error) {
      if (parsed.data.kind !== "run-result") throw error;
      await this.endRunIfResultExhausted(parsed.data, error);
    }
  }

  /**
   * Rethrows (the result is taken again after `resultRetryMs`) until it failed `resultAttempts` times;
   * then ends its run as failed with an incident, so a poison result cannot wedge a project.
   */
  private async endRunIfResultExhausted(result: RunResult, error: unknown): Promise<void> {
    const failures = await this.deps.queues.countResultFailure(result.runId);
    const limit = this.options.resultAttempts;
    if (failures < limit) throw error;
    const { projectId, runId } = result;
    this.deps.logger.error(
      { err: error, projectId, runId, failures },
      "run result cannot be applied; ending the run as failed",
    );
    await this.serializer.run(projectId, async () => {
      const project = await this.rows.get(projectId);
      const { retry } = this.policies.of(project);
      await this.apply(projectId, unapplicableResultCommand(result, error, failures, retry));
    });
  }

  async applyResultMessage(message: ResultMessage): Promise<void> {
    const { projectId, runId } = message;
    if (message.kind === "run-usage") {
      // Outside the project's serializer: a row lock orders usage reports. A grown spend gets
      // a pass, whose budget check may pause the project.
      if (await recordUsageReport(this.deps.db, projectId, runId, message.usage)) this.kick(projectId);
      return;
    }
    await this.serializer.run(projectId, async () => {
      if (message.kind === "run-started") {
        await this.apply(
          projectId,
          { kind: "run-started", runId, workerId: message.workerId },
          { ctx: { now: message.at } },
        );
        return;
      }
      await this.applyRunResult(message);
    });
  }

  /**
   * Phases: load the project, map the result to its command, apply it. One result is one
   * command in one transaction: an outcome the state machine refuses (a reviewer that
   * submitted, say) is failed by the domain itself under the project's retry policy.
   */
  private async applyRunResult(result: RunResult): Promise<void> {
    const project = await this.projectIfExists(result.projectId);
    if (!project) return;
    const receivedAt = Date.now();
    const command = await this.commandFor(result, project);
    // One time for the run's end and its timeline's last phase: the phases add up to its duration.
    const appliedAt = Date.now();
    const phases = phaseTimeline(result, appliedAt);
    const runReport = { ...runReportOf(result, receivedAt), phases };
    const applied = await this.apply(project.id, command, { runReport, ctx: { now: appliedAt } });
    const traced = this.deps.tracing ? appliedRunOf(result, applied, phases) : null;
    if (traced) this.deps.tracing?.recordApplied(traced);
    // A newly approved head on the pull request branch: open or update its pull request now.
    if (command.kind === "approve" && command.pullRequest && result.pullRequestHead) {
      await this.forge.requestEnsure(project.id, result.runId, result.pullRequestHead.sha);
    }
  }

  /** A result for a project deleted meanwhile is dropped. */
  private async projectIfExists(projectId: string): Promise<ProjectRow | null> {
    return this.rows.get(projectId).catch((error) => {
      if (error instanceof NotFoundError) return null;
      throw error;
    });
  }

  /** A planner's graph may depend on the project's existing tasks; nothing else needs them. */
  private async commandFor(result: RunResult, project: ProjectRow): Promise<Command> {
    const planning = result.outcome.kind === "transition" && result.outcome.transition.kind === "plan";
    const taskIds = planning ? await existingTaskIds(this.deps.db, project.id) : [];
    const policy = this.policies.of(project);
    return commandForResult(
      result,
      policy.retry,
      taskIds,
      policy.planApproval,
      policy.landing.branch,
      this.options.maxPlanTasks,
      policy.landing.pullRequest.prerequisites,
    );
  }

  /** Every owned project gets a pass (the LISTEN connection came back: notifications were lost). */
  private kickAll(): void {
    this.rows.dropAll();
    for (const projectId of this.owned) this.kick(projectId);
  }

  // -------------------------------------------------------------------------------------

  /**
   * Applies one command through the shared apply-and-publish path. Returns null when the
   * lease was lost (only commands applied with `leaseOwner`, the scheduling claim, check it).
   */
  private async apply(
    projectId: string,
    command: Command,
    options: ApplyCommandOptions = {},
  ): Promise<AppliedTransition | null> {
    try {
      const applied = await this.transitions.apply(projectId, command, options);
      // What a run spent moved its project's spend: a budget's check must read it again. A
      // result delivered again recorded nothing (its spend was counted once): nothing to check.
      if (applied.usageRecorded && !this.unbudgeted(projectId)) {
        this.rows.drop(projectId);
        // A result of a run that had already ended (cancelled, timed out) records only its
        // usage: no commit hook asks for a pass and its NOTIFY is this replica's own, so the
        // pass whose budget check may pause the project is asked for here.
        if (applied.outcome === "already_applied") this.kick(projectId);
      }
      return applied;
    } catch (error) {
      if (error instanceof LeaseLostError && options.leaseOwner !== undefined) {
        await this.settleDropped([projectId]);
        // Still ours, its lease lapsed (Postgres away past the TTL): pass again once renewed.
        if (this.owned.has(projectId)) this.lapsed.add(projectId);
        return null;
      }
      throw error;
    }
  }

  /**
   * Nothing periodic passes over every project, so a pass that failed (database or Redis down
   * a moment) is asked again after a reconcile interval, once however many passes failed.
   */
  private onPassError(projectId: string, error: unknown): void {
    this.deps.logger.error({ err: error, projectId }, "scheduling pass failed; retrying later");
    if (this.stopped || this.retryTimers.has(projectId)) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(projectId);
      this.kick(projectId);
    }, this.reconcileIntervalMs);
    timer.unref();
    this.retryTimers.set(projectId, timer);
  }
}
