/**
 * What the coordinator's service-level tests share: a scratch database, Redis under a prefix of
 * their own, the run queues and live channel on it, an operator's applier (its commits NOTIFY
 * without an origin, as the gateway's and the CLI's do), and coordinators on them, stopped at
 * the end.
 */
import { randomBytes } from "node:crypto";
import { createScratchDatabase, type Db, type ScratchDatabase } from "@overseer/db";
import { LiveChannel, type Redis, RunQueues, resolveLiveOptions, resolveQueueOptions } from "@overseer/queue";
import type { RunOutcome } from "@overseer/run-contract";
import { createLogger, type Logger } from "@overseer/runtime";
import {
  createTestRedis,
  deleteRedisKeys,
  runResultFixture,
  uniqueRedisPrefix,
} from "@overseer/test-support";
import { TransitionApplier } from "@overseer/transitions";
import { Coordinator } from "../src/coordinator.ts";
import { type CoordinatorOptions, resolveCoordinatorOptions } from "../src/coordinator-options.ts";

export interface CoordinatorRig {
  readonly scratch: ScratchDatabase;
  readonly redis: Redis;
  readonly queues: RunQueues;
  readonly live: LiveChannel;
  readonly applier: TransitionApplier;
  readonly logger: Logger;
  /** A coordinator on the rig (not started: it owns no lease until it renews them). */
  coordinator(options?: Partial<CoordinatorOptions>, log?: Logger, db?: Db): Coordinator;
  /** Stops every coordinator, then drops the database and the Redis keys. */
  close(): Promise<void>;
}

export async function openCoordinatorRig(name: string): Promise<CoordinatorRig> {
  const prefix = uniqueRedisPrefix(name);
  const logger = createLogger({ name, level: "silent" });
  const scratch = await createScratchDatabase();
  const redis = createTestRedis();
  const queues = new RunQueues(redis, resolveQueueOptions({ prefix }));
  const live = new LiveChannel(redis, resolveLiveOptions({ prefix }));
  const applier = new TransitionApplier({ db: scratch.db, live, queues });
  const coordinators: Coordinator[] = [];
  return {
    scratch,
    redis,
    queues,
    live,
    applier,
    logger,
    coordinator(options = {}, log = logger, db = scratch.db) {
      const created = new Coordinator(
        { db, notifications: scratch.notifications, workerConnection: redis, queues, live, logger: log },
        resolveCoordinatorOptions({ id: `coord-${randomBytes(3).toString("hex")}`, prefix, ...options }),
      );
      coordinators.push(created);
      return created;
    },
    async close() {
      for (const c of coordinators) await c.stop();
      await queues.close();
      await deleteRedisKeys(redis, prefix);
      redis.disconnect();
      await scratch.drop();
    },
  };
}

/**
 * The test database, counting the transactions opened through it: `db.transaction()` is the
 * one way a command is applied (applyTransition), so the count is the number of transactions.
 */
export function countingTransactions(db: Db): { db: Db; count: () => number } {
  let transactions = 0;
  const counting = new Proxy(db, {
    get(target, property) {
      if (property === "transaction") transactions++;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: counting, count: () => transactions };
}

/** A run result that brings `transition` (version 1), as a worker reports it. */
export function transitionResult(runId: string, projectId: string, transition: object) {
  const outcome = { kind: "transition", transition: { version: 1, ...transition }, usage: undefined };
  return runResultFixture({
    runId,
    projectId,
    outcome: outcome as RunOutcome,
    workerId: "worker-test",
    commitSha: "c0ffee",
    branchHead: "c0ffee",
    durationMs: 5,
    output: "done",
  });
}
