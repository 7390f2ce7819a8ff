import { type AppliedTransition, type ApplyOptions, applyTransition, ConflictError } from "@overseer/db";
import type { Command } from "@overseer/domain";
import type { GatewayDeps } from "../gateway-options.ts";
import { withTimeout } from "../http/with-timeout.ts";
import type { GatewayMetrics } from "../metrics/gateway-metrics.ts";

/**
 * Applies operator commands (answer, resolve, release, cancel, project status) the same way
 * the coordinator applies run outcomes: one Postgres transaction through `applyTransition`
 * (which also NOTIFYs the coordinator, who schedules the next run with the answer in its
 * prompt), bounded retries on optimistic-concurrency conflicts, then live publication.
 *
 * After commit, failures to publish to Redis or to drop a cancelled run's queued job are
 * logged and ignored: the transition is durable, watchers catch up from Postgres, and the
 * coordinator's reconcile pass drops jobs of runs that are no longer active.
 */
export class OperatorTransitions {
  constructor(
    private readonly deps: Pick<GatewayDeps, "db" | "live" | "queues" | "logger">,
    private readonly metrics: GatewayMetrics,
    private readonly conflictRetries: number,
    /** Bound on each post-commit Redis call, so a Redis outage cannot hold an answered request. */
    private readonly redisTimeoutMs: number,
    /** Called right after commit, before anything else: the project's cached reads are stale. */
    private readonly onCommit: (projectId: string) => void = () => {},
  ) {}

  /**
   * `retries: false` for commands guarded by `expectedTask`: a conflict then means the
   * caller's premise changed, and the caller decides again from a fresh read.
   */
  async apply(
    projectId: string,
    command: Command,
    options: Pick<ApplyOptions, "expectedTask"> & { retries?: boolean } = {},
  ): Promise<AppliedTransition> {
    const attempts = options.retries === false ? 1 : this.conflictRetries;
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await applyTransition(this.deps.db, projectId, command, {
          expectedTask: options.expectedTask,
        });
        if (result.outcome === "applied") this.onCommit(projectId);
        this.metrics.operatorTransitions.inc({ kind: command.kind, outcome: result.outcome });
        await this.afterCommit(result);
        return result;
      } catch (error) {
        if (error instanceof ConflictError && attempt < attempts) continue;
        this.metrics.operatorTransitions.inc({
          kind: command.kind,
          outcome: error instanceof ConflictError ? "conflict" : "refused",
        });
        throw error;
      }
    }
  }

  private async afterCommit(result: AppliedTransition): Promise<void> {
    const { live, queues, logger } = this.deps;
    if (result.eventRows.length > 0) {
      await withTimeout(
        live.publishEvents(
          result.eventRows.map((e) => ({
            id: String(e.id),
            projectId: e.project_id,
            taskId: e.task_id,
            runId: e.run_id,
            type: e.type,
            data: e.data,
            createdAt: e.created_at.toISOString(),
          })),
        ),
        this.redisTimeoutMs,
        "Redis",
      ).catch((error) =>
        logger.warn({ err: error }, "live event publication failed; watchers catch up from Postgres"),
      );
    }
    for (const run of result.changes.runs) {
      if (run.status !== "cancelled") continue;
      await withTimeout(queues.removeRun(run.id), this.redisTimeoutMs, "Redis").catch((error) =>
        logger.warn({ err: error, runId: run.id }, "cannot remove the cancelled run's queued job"),
      );
    }
  }
}
