import { type Db, type RunFenceCheck, runRefusal, withLiveRun } from "@overseer/db";
import type { PushGuard } from "@overseer/git";
import type { RunJob } from "@overseer/queue";

/**
 * What Postgres says about a run before the worker acts on it (docs/architecture.md, Trust
 * model: the run fence). A delivery whose run is no longer live does nothing; every push of a
 * run goes through `guard`, which pushes only while the run is live and, for a landing, only
 * the head Postgres recorded at the submit.
 */
export interface RunFence {
  /** Why the run may not act (cancelled, ended, task done or cancelled, project stopped), or null. */
  refusal(job: RunJob): Promise<string | null>;
  /** The guard of this run's pushes; `landing` names the approved head a landing may push. */
  guard(job: RunJob, landing?: { sourceSha: string }): PushGuard;
}

/** The run fence on the project's Postgres (@overseer/db run-fence.ts holds the query and the lock). */
export function postgresRunFence(db: Db): RunFence {
  const checkOf = (job: RunJob, landing?: { sourceSha: string }): RunFenceCheck => ({
    projectId: job.projectId,
    runId: job.runId,
    landing,
  });
  return {
    refusal: (job) => runRefusal(db, checkOf(job)),
    guard: (job, landing) => (push) => withLiveRun(db, checkOf(job, landing), push, (pushed) => pushed.ok),
  };
}
