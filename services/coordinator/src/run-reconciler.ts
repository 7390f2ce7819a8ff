/**
 * The coordinator's safety net: Redis must reflect Postgres. Scheduling is driven by events;
 * this only finds the runs whose work vanished from Redis (a flush, a crash between commit and
 * enqueue) or whose job failed for good, and repairs them in their project's turn.
 *
 * A sweep round reads one bounded batch of the active runs of the projects this replica
 * leases (one statement, by run id after the previous round's last) and checks them against
 * Redis by job id (two commands per run, one round trip), so its cost does not grow with idle
 * projects, and every active run is checked once per ⌈runs / batch⌉ rounds.
 */
import {
  activeRuns,
  activeRunsOfLeaseOwner,
  type Db,
  getRun,
  loadProjectSnapshot,
  type ProjectRow,
  requireProject,
} from "@overseer/db";
import type { Command, ProjectState, Run } from "@overseer/domain";
import type { RunJobState, RunQueues } from "@overseer/queue";
import { DEFAULT_POOL } from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";

export interface RunReconcilerDeps {
  db: Db;
  queues: Pick<RunQueues, "runJobState" | "runJobStates">;
  logger: Logger;
}

/** What the reconciler needs of its coordinator. */
export interface RunReconcilerHooks {
  /** The coordinator's id: the sweep reads the runs of the projects it leases. */
  owner: string;
  /** Active runs one round checks. */
  batch: number;
  /** Whether this replica schedules the project now. */
  isOwned(projectId: string): boolean;
  /** Runs `fn` in the project's turn (after its pending passes and results). */
  inTurn(projectId: string, fn: () => Promise<void>): void;
  enqueueRun(project: ProjectRow, state: ProjectState, run: Run): Promise<unknown>;
  apply(projectId: string, command: Command): Promise<void>;
  retryOf(project: ProjectRow): { maxAttempts: number; backoffMs: number };
}

export class RunReconciler {
  /** The last run id the sweep checked (null: start from the first). */
  private cursor: string | null = null;
  private sweeping = false;

  constructor(
    private readonly deps: RunReconcilerDeps,
    private readonly hooks: RunReconcilerHooks,
  ) {}

  /** One round; rounds never overlap (a slow one makes the next timer tick a no-op). */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const { batch: limit, owner } = this.hooks;
      const batch = await activeRunsOfLeaseOwner(this.deps.db, owner, this.cursor, limit);
      this.cursor = batch.length < limit ? null : (batch.at(-1)?.id ?? null);
      const pools = new Map(batch.map((r) => [r.id, r.pool]));
      const states = await this.deps.queues.runJobStates(
        batch.map((r) => r.id),
        (id) => pools.get(id) ?? DEFAULT_POOL,
      );
      for (const { id, projectId } of batch) {
        if (needsRepair(states.get(id))) this.hooks.inTurn(projectId, () => this.repairRun(projectId, id));
      }
    } catch (error) {
      this.deps.logger.error({ err: error }, "reconcile sweep failed; the next round tries again");
    } finally {
      this.sweeping = false;
    }
  }

  /** Every active run of one project checked (a lease just won); call it in the project's turn. */
  async reconcile(projectId: string): Promise<void> {
    if (!this.hooks.isOwned(projectId)) return;
    const runs = await activeRuns(this.deps.db, [projectId]);
    const pools = new Map(runs.map((r) => [r.id, r.pool]));
    const states = await this.deps.queues.runJobStates(
      runs.map((r) => r.id),
      (id) => pools.get(id) ?? DEFAULT_POOL,
    );
    for (const run of runs) if (needsRepair(states.get(run.id))) await this.repairRun(projectId, run.id);
  }

  /**
   * An active run must have a job (or a reported result) in Redis, in the queue of the pool its
   * row names. Order matters: Redis is read, then Postgres, before acting, so a result applied
   * in between is never mistaken for a lost job. Runs in the project's turn.
   */
  private async repairRun(projectId: string, runId: string): Promise<void> {
    if (!this.hooks.isOwned(projectId)) return;
    const { db, logger } = this.deps;
    // The pool as its job was queued (the sweep's row may predate the enqueue that set it).
    const pool = (await getRun(db, runId))?.pool ?? DEFAULT_POOL;
    const jobState = await this.deps.queues.runJobState(runId, pool);
    if (!needsRepair(jobState)) return;
    const fresh = await getRun(db, runId);
    if (!fresh || (fresh.status !== "queued" && fresh.status !== "running")) return;
    if (jobState.state === "missing") {
      logger.warn({ projectId, runId }, "active run has no job in Redis; re-enqueueing");
      const [project, state] = await Promise.all([
        requireProject(db, projectId),
        loadProjectSnapshot(db, projectId, { runIds: [runId] }),
      ]);
      const run = state.runs.get(runId);
      if (run) await this.hooks.enqueueRun(project, state, run);
      return;
    }
    const retry = this.hooks.retryOf(await requireProject(db, projectId));
    await this.hooks.apply(projectId, {
      kind: "no-transition",
      runId,
      detail: `worker failed: ${jobState.failedReason ?? "unknown error"}`,
      crashed: false,
      maxAttempts: retry.maxAttempts,
      backoffMs: retry.backoffMs,
    });
  }
}

/** A run whose job is missing or failed for good (not one that runs, waits or reported). */
function needsRepair(state: RunJobState | undefined): state is RunJobState {
  return state !== undefined && (state.state === "missing" || state.state === "failed");
}
