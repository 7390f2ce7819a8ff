/**
 * The coordinator's tracker side, started and stopped together: intake (issues in, as tasks)
 * and two-way status (word back to those issues).
 */
import type { Db, NotificationListener } from "@overseer/db";
import type { Redis, RunQueues } from "@overseer/queue";
import type { Logger } from "@overseer/runtime";
import type { TransitionApplier } from "@overseer/transitions";
import type { ResolvedCoordinatorOptions } from "../coordinator-options.ts";
import { IntakeRunner } from "./intake-runner.ts";
import { TrackerStatusRunner } from "./tracker-status-runner.ts";

export interface IntakeServicesDeps {
  readonly db: Db;
  readonly queues: Pick<RunQueues, "intake" | "trackerStatus">;
  readonly notifications: NotificationListener;
  readonly workerConnection: Redis;
  readonly logger: Logger;
  /** Whether a task's open pull request merged on the forge, recorded if so (the forge runner's). */
  readonly mergedOnForge?: (projectId: string, taskId: string) => Promise<boolean>;
}

export class IntakeServices {
  readonly runner: IntakeRunner;
  readonly status: TrackerStatusRunner;

  constructor(
    deps: IntakeServicesDeps,
    transitions: Pick<TransitionApplier, "apply">,
    options: ResolvedCoordinatorOptions,
  ) {
    this.runner = new IntakeRunner({ ...deps, queue: deps.queues.intake, transitions }, options);
    this.status = new TrackerStatusRunner({ ...deps, queue: deps.queues.trackerStatus }, options);
  }

  async start(): Promise<void> {
    await this.runner.start();
    await this.status.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.runner.stop(), this.status.stop()]);
  }
}
