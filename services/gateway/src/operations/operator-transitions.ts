import type { AppliedTransition, Db } from "@overseer/db";
import { ConflictError } from "@overseer/db";
import type { Command } from "@overseer/domain";
import { type ApplyCommandOptions, TransitionApplier } from "@overseer/transitions";
import type { GatewayDeps } from "../gateway-options.ts";
import { withTimeout } from "../http/with-timeout.ts";
import type { GatewayMetrics } from "../metrics/gateway-metrics.ts";

/**
 * Operator commands (answer, resolve, release, cancel, project status, task import) go
 * through the shared apply-and-publish path of `@overseer/transitions`, the one the
 * coordinator uses for run outcomes: one Postgres transaction (whose NOTIFY wakes the
 * coordinator), retries on conflicts, live publication and removal of cancelled jobs.
 * This class adds what only the gateway needs: each post-commit Redis call is bounded, so a
 * Redis outage cannot hold an answered request, and every outcome is counted in metrics.
 */
export class OperatorTransitions {
  private readonly applier: TransitionApplier;

  constructor(
    deps: Pick<GatewayDeps, "db" | "live" | "queues" | "logger">,
    private readonly metrics: GatewayMetrics,
    options: {
      conflictRetries: number;
      /** Bound on each post-commit Redis call. */
      redisTimeoutMs: number;
      /** Called right after commit, before anything else: the project's cached reads are stale. */
      onCommit?: (projectId: string) => void;
    },
  ) {
    this.applier = new TransitionApplier(deps, {
      conflictRetries: options.conflictRetries,
      boundRedis: (call) => withTimeout(call, options.redisTimeoutMs, "Redis"),
      onCommit: options.onCommit,
    });
  }

  get db(): Db {
    return this.applier.db;
  }

  /** `retryOnConflict: false` for commands guarded by `expectedTask` (see ApplyCommandOptions). */
  async apply(
    projectId: string,
    command: Command,
    options: Pick<ApplyCommandOptions, "expectedTask" | "retryOnConflict" | "projectStatusIn"> = {},
  ): Promise<AppliedTransition> {
    try {
      const result = await this.applier.apply(projectId, command, options);
      this.metrics.operatorTransitions.inc({ kind: command.kind, outcome: result.outcome });
      return result;
    } catch (error) {
      this.metrics.operatorTransitions.inc({
        kind: command.kind,
        outcome: error instanceof ConflictError ? "conflict" : "refused",
      });
      throw error;
    }
  }
}
