import { setTimeout as sleep } from "node:timers/promises";
import {
  type Db,
  type HeldRunFence,
  holdLiveRun,
  type LandedHead,
  liveRunJob,
  type RunFenceCheck,
  RunNotLiveError,
  runRefusal,
} from "@overseer/db";
import type { PushBranchResult, PushGuard } from "@overseer/git";
import type { RunJob, RunRef } from "@overseer/run-contract";
import { RUN_FENCE_DEFAULTS } from "@overseer/settings";

/**
 * What Postgres says about a run before the worker acts on it (docs/architecture.md, Trust
 * model: the run fence). A delivery whose run is no longer live does nothing; every push of a
 * run goes through `guard`, which pushes only while the run is live and, for a landing, only
 * the head Postgres recorded at the submit.
 */
export interface RunFence {
  /** Why the run may not act (cancelled, ended, task done or cancelled, project stopped), or null. */
  refusal(job: RunJob): Promise<string | null>;
  /**
   * The same, for a queued reference (by the run's id alone when it names no project), with
   * the run's stored job when it may act (unvalidated JSON, null when none is stored): one read.
   */
  load(
    ref: RunRef,
  ): Promise<{ refusal: string } | { refusal: null; job: unknown | null; landedHead: LandedHead | null }>;
  /**
   * The guard of this run's pushes; `landing` names the approved head a landing may push, and
   * `landed()` what the push that went through put on which branch (recorded by the fence).
   */
  guard(job: RunJob, landing?: FencedLanding): PushGuard;
  /**
   * The guard of the run's pushes, its first push's transaction opened now: its read and row
   * locks are done while the worker commits (or integrates a landing, `landing` as for
   * `guard`), so that push waits for no round trip. The caller must `close` it.
   */
  open(job: RunJob, landing?: FencedLanding): OpenedRunFence;
}

/** A landing's guard: the approved head, and what the landing pushes (its last attempt). */
export interface FencedLanding {
  sourceSha: string;
  landed?: () => LandedHead | null;
}

/** A fence opened ahead of its push (RunFence.open). */
export interface OpenedRunFence {
  /**
   * Guards pushes as `guard` does; the first one runs under the opened transaction (unless it
   * was closed first, or could not open), later ones each under their own.
   */
  guard: PushGuard;
  /**
   * Ends the opened transaction if no push used it (its rows are no longer held); a push the
   * guard makes afterwards opens its own fence, read at that push.
   */
  close(): Promise<void>;
}

export interface PostgresRunFenceOptions {
  /** How long a fence waits for Postgres to answer (an outage, a restart) before it fails. Default 120000 ms. */
  waitMs?: number;
  /** Pause between two tries while Postgres does not answer. Default 500 ms. */
  retryMs?: number;
  onRetry?(error: unknown): void;
}

/**
 * The run fence on the project's Postgres (@overseer/db run-fence.ts holds the query and the
 * lock). While Postgres cannot answer, the fence waits for it (`waitMs`) rather than failing
 * the run: nothing is pushed meanwhile. A failure of the push itself is never retried here.
 */
export function postgresRunFence(db: Db, given: PostgresRunFenceOptions = {}): RunFence {
  const options = resolveRunFenceOptions(given);
  const checkOf = (job: Pick<RunJob, "projectId" | "runId">, landing?: FencedLanding): RunFenceCheck => ({
    projectId: job.projectId,
    runId: job.runId,
    // A landing that says what it pushes puts it on the landing branch: its order is drawn.
    landing: landing ? { sourceSha: landing.sourceSha, ordered: landing.landed !== undefined } : undefined,
  });
  const patiently = <T>(attempt: () => Promise<T>, retryable: (error: unknown) => boolean) =>
    untilAnswered(attempt, retryable, options);
  const guard = (job: RunJob, landing?: FencedLanding): PushGuard => guarded(job, landing);
  /**
   * Pushes under the opened fence `take` hands over (once: later calls get nothing), else under
   * a new transaction, tried again while Postgres does not answer.
   */
  const guarded =
    (
      job: RunJob,
      landing?: FencedLanding,
      take?: () => Promise<HeldRunFence | null> | undefined,
    ): PushGuard =>
    async (push) => {
      let pushFailed = false;
      const failing = () =>
        push().catch((error: unknown): PushBranchResult => {
          pushFailed = true;
          throw error;
        });
      const once = async () => {
        const held = (await take?.()) ?? (await holdLiveRun(db, checkOf(job, landing)));
        return held.move(failing, (pushed: PushBranchResult) => pushed.ok && (landing?.landed?.() ?? true));
      };
      // A retry after the push went through (the commit failed) pushes the same sha again,
      // which the compare-and-swap push answers as done.
      return patiently(once, (error) => !pushFailed && !(error instanceof RunNotLiveError));
    };
  return {
    refusal: (job) =>
      patiently(
        () => runRefusal(db, checkOf(job)),
        () => true,
      ),
    load: (ref) =>
      patiently(
        () => liveRunJob(db, { runId: ref.runId, projectId: ref.projectId }),
        () => true,
      ),
    guard,
    open: (job, landing) => {
      // Not answered (Postgres away): the guard opens its own, patiently, when it pushes.
      let unused: Promise<HeldRunFence | null> | undefined = holdLiveRun(db, checkOf(job, landing)).catch(
        () => null,
      );
      // Handed over once: to the first push, or to `close` when no push came first.
      const take = () => {
        const held = unused;
        unused = undefined;
        return held;
      };
      return {
        guard: guarded(job, landing, take),
        close: async () => (await take())?.close(),
      };
    },
  };
}

type ResolvedRunFenceOptions = Readonly<Required<PostgresRunFenceOptions>>;

/** Merges the options over `RUN_FENCE_DEFAULTS` once and checks them (key, rule, value received). */
function resolveRunFenceOptions(options: PostgresRunFenceOptions): ResolvedRunFenceOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const resolved: ResolvedRunFenceOptions = { ...RUN_FENCE_DEFAULTS, onRetry: () => undefined, ...defined };
  for (const key of ["waitMs", "retryMs"] as const) {
    if (!Number.isInteger(resolved[key]) || resolved[key] < 0)
      throw new RangeError(`${key} must be an integer >= 0, received ${String(resolved[key])}`);
  }
  return resolved;
}

async function untilAnswered<T>(
  attempt: () => Promise<T>,
  retryable: (error: unknown) => boolean,
  options: ResolvedRunFenceOptions,
): Promise<T> {
  const deadline = Date.now() + options.waitMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!retryable(error) || Date.now() >= deadline) throw error;
      options.onRetry(error);
      await sleep(options.retryMs);
    }
  }
}
