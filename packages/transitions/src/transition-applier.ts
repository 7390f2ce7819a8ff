import {
  type AppliedTransition,
  type ApplyOptions,
  applyTransition,
  ConflictError,
  type Db,
  type EventRow,
  runPools,
} from "@overseer/db";
import type { Command } from "@overseer/domain";
import type { LiveChannel, LiveEvent, RunQueues } from "@overseer/queue";
import type { Logger } from "@overseer/runtime";

/** Defaults of the apply-and-publish path, defined once. */
export const TRANSITION_DEFAULTS = Object.freeze({
  /** Attempts to apply a command that hit a concurrent change. */
  conflictRetries: 8,
});

export interface TransitionApplierDeps {
  db: Db;
  /** Applied events are logged at info, one line each; absent: nothing is logged. */
  logger?: Logger | undefined;
  /** Live event channel; null when the caller has no Redis (watchers then catch up from Postgres). */
  live?: Pick<LiveChannel, "publishEvents"> | null | undefined;
  /** Run queues; null when the caller has no Redis (the coordinator's reconcile drops stale jobs). */
  queues?: Pick<RunQueues, "removeRun"> | null | undefined;
}

export interface TransitionApplierOptions {
  /** Attempts per command on optimistic-concurrency conflicts. Default 8. */
  conflictRetries?: number | undefined;
  /**
   * Wraps each post-commit Redis call, so a Redis outage cannot hold the caller (the gateway
   * bounds it with its ready timeout). Default: unbounded.
   */
  boundRedis?: (<T>(call: Promise<T>) => Promise<T>) | undefined;
  /**
   * The applier's name in its commits' NOTIFY (a coordinator's id), so that it can skip its
   * own notifications. Default: none.
   */
  origin?: string | undefined;
  /**
   * Called right after a commit that applied something, before any publication. `overlapped`:
   * another commit of this applier on the same project landed while this one was in flight, so
   * `result.state` may lack that commit's changes (and that one's state may lack this one's).
   * Not overlapped, `result.state` holds every earlier commit of this applier on the project.
   */
  onCommit?: ((projectId: string, result: AppliedTransition, overlapped: boolean) => void) | undefined;
}

export interface ApplyCommandOptions extends ApplyOptions {
  /**
   * false for commands guarded by `expectedTask`: a conflict then means the caller's premise
   * changed, and the caller decides again from a fresh read. Default true.
   */
  retryOnConflict?: boolean | undefined;
  /**
   * Starts once the transaction committed, beside the publication of its live events (one wait
   * for both, not one after the other): what must not wait for watchers, such as queueing the
   * runs a claim created. Its failure is the apply's, after the publication settled.
   */
  onCommitted?: ((result: AppliedTransition) => Promise<void>) | undefined;
}

/**
 * The one path every state change takes (coordinator, gateway, CLI):
 *
 *   command ──► applyTransition (one Postgres transaction, NOTIFY) ──► retry on conflict
 *           ──► publish the stored events live ──► drop the queued jobs of cancelled runs
 *
 * After commit, Redis failures are logged and ignored: the transition is durable, watchers
 * catch up from Postgres and the coordinator's reconcile drops jobs of runs no longer active.
 * Refusals (DomainError, LeaseLostError, a conflict after the last attempt) are thrown.
 */
export class TransitionApplier {
  private readonly conflictRetries: number;
  /** Per project with applies in flight: how many, and the commits counted while they are. */
  private readonly inFlight = new Map<string, { applies: number; commits: number }>();

  constructor(
    private readonly deps: TransitionApplierDeps,
    private readonly options: TransitionApplierOptions = {},
  ) {
    this.conflictRetries = options.conflictRetries ?? TRANSITION_DEFAULTS.conflictRetries;
    if (this.conflictRetries < 1) throw new RangeError("conflictRetries must be at least 1");
  }

  get db(): Db {
    return this.deps.db;
  }

  async apply(
    projectId: string,
    command: Command,
    options: ApplyCommandOptions = {},
  ): Promise<AppliedTransition> {
    const { retryOnConflict = true, onCommitted, ...applyOptions } = options;
    const attempts = retryOnConflict ? this.conflictRetries : 1;
    const flight = this.inFlight.get(projectId) ?? { applies: 0, commits: 0 };
    this.inFlight.set(projectId, flight);
    flight.applies++;
    const commitsBefore = flight.commits;
    try {
      for (let attempt = 1; ; attempt++) {
        let result: AppliedTransition;
        try {
          const origin = this.options.origin;
          result = await applyTransition(this.deps.db, projectId, command, {
            ...applyOptions,
            ...(origin ? { origin } : {}),
          });
        } catch (error) {
          if (error instanceof ConflictError && attempt < attempts) continue;
          throw error;
        }
        // Committed: nothing after this point applies the command again.
        if (result.outcome === "applied") {
          flight.commits++;
          this.options.onCommit?.(projectId, result, flight.commits - 1 !== commitsBefore);
        }
        const settled = await Promise.allSettled([onCommitted?.(result), this.afterCommit(result)]);
        for (const one of settled) if (one.status === "rejected") throw one.reason;
        return result;
      }
    } finally {
      if (--flight.applies === 0) this.inFlight.delete(projectId);
    }
  }

  private async afterCommit(result: AppliedTransition): Promise<void> {
    const { live, queues, logger } = this.deps;
    const bound = this.options.boundRedis ?? (<T>(call: Promise<T>) => call);
    if (result.eventRows.length > 0 && live) {
      await bound(live.publishEvents(result.eventRows.map(liveEventOf))).catch((error) =>
        logger?.warn({ err: error }, "live event publication failed; watchers catch up from Postgres"),
      );
    }
    for (const e of result.eventRows) {
      logger?.info({ projectId: e.project_id, taskId: e.task_id, runId: e.run_id, event: e.type }, e.type);
    }
    if (!queues) return;
    const cancelled = result.changes.runs.filter((run) => run.status === "cancelled").map((run) => run.id);
    if (cancelled.length === 0) return;
    // Each job waits in its pool's queue: one read of the pools for all the cancelled runs.
    const pools = await runPools(this.deps.db, cancelled).catch((error) => {
      logger?.warn({ err: error }, "cannot read the cancelled runs' pools; their jobs end at the run fence");
      return null;
    });
    if (!pools) return;
    for (const runId of cancelled) {
      await bound(queues.removeRun(runId, pools.get(runId))).catch((error) =>
        logger?.warn({ err: error, runId }, "cannot remove the cancelled run's queued job"),
      );
    }
  }
}

/** A stored event as watchers receive it live. */
export function liveEventOf(row: EventRow): LiveEvent {
  return {
    id: String(row.id),
    projectId: row.project_id,
    taskId: row.task_id,
    runId: row.run_id,
    type: row.type,
    data: row.data,
    createdAt: row.created_at.toISOString(),
  };
}
