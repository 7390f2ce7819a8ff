/**
 * From a queued run to its job in Redis. A claim's runs have their jobs built and stored inside
 * the claim's own transaction (`jobsOfClaim`, ApplyOptions.runJobs: no statement or commit of
 * their own), and are queued once it committed (`queueClaimed`); a run found without its job
 * (the reconciler's repair) is built, stored and queued here (`enqueueRun`). The job stays in
 * Postgres, stored before the queue names it: Redis carries its ids only.
 */
import {
  countRunsOfAction,
  type Db,
  loadMissionEvidence,
  type MissionEvidence,
  type ProjectRow,
  type RunJobsBuilder,
  type StoredRunJob,
  storeRunJob,
} from "@overseer/db";
import type { Command, ProjectState, Run } from "@overseer/domain";
import type { RunQueues } from "@overseer/queue";
import { runRefOf } from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";
import type { RunTracing } from "@overseer/telemetry";
import type { ProjectPolicies } from "./project-policy.ts";
import { buildRunJob, type JobBuild } from "./run-job-builder.ts";

export interface RunEnqueuerDeps {
  db: Db;
  queues: Pick<RunQueues, "enqueueRun">;
  policies: ProjectPolicies;
  logger: Logger;
  tracing?: RunTracing | null | undefined;
  /** Applies a command to the project (a run whose job cannot be built is failed by one). */
  apply(projectId: string, command: Command): Promise<unknown>;
}

/** What a claim's transaction built: each created run's job, or why it could not be. */
export type ClaimJobs = Map<string, JobBuild>;

export class RunEnqueuer {
  constructor(private readonly deps: RunEnqueuerDeps) {}

  /**
   * The claim's `runJobs`: each created run's job, from the state and project row the claim
   * wrote, recorded in `built` (emptied first: a retried transaction builds again).
   */
  jobsOfClaim(project: ProjectRow, built: ClaimJobs): RunJobsBuilder {
    return async ({ state, projectRow, runs }, trx) => {
      built.clear();
      const stored = new Map<string, StoredRunJob>();
      for (const { run, number } of runs) {
        const build = await this.build(trx, projectRow ?? project, state, run, number);
        built.set(run.id, build);
        if (build.ok) stored.set(run.id, build.job);
      }
      return stored;
    };
  }

  /**
   * Queues a claimed run whose job the claim stored; a run whose job could not be built is failed
   * instead. Returns true when it was (its slot is free again).
   */
  async queueClaimed(projectId: string, run: Run, build: JobBuild): Promise<boolean> {
    if (!build.ok) {
      await this.misconfigured(projectId, run, build);
      return true;
    }
    await this.deps.queues.enqueueRun(runRefOf(build.job));
    return false;
  }

  /**
   * Builds, stores and enqueues a run's job from `state` (no reload). Returns true when the run
   * was failed instead (its slot is free again). A run that ended meanwhile (cancelled) stores
   * nothing and is not queued.
   */
  async enqueueRun(project: ProjectRow, state: ProjectState, run: Run, known?: number): Promise<boolean> {
    const db = this.deps.db;
    const number = known ?? (await countRunsOfAction(db, project.id, run.taskId, run.action));
    const build = await this.build(db, project, state, run, number);
    if (!build.ok) {
      await this.misconfigured(project.id, run, build);
      return true;
    }
    if (await storeRunJob(db, run.id, build.job)) await this.deps.queues.enqueueRun(runRefOf(build.job));
    return false;
  }

  /** The run's job (opening its trace when traces are on), or why it cannot be built. */
  private async build(
    db: Db,
    project: ProjectRow,
    state: ProjectState,
    run: Run,
    number: number,
  ): Promise<JobBuild> {
    const policy = this.deps.policies.ifValid(project);
    if (!policy.ok) return { ok: false, reason: "configuration_error", message: policy.error.message };
    const planning = state.tasks.get(run.taskId)?.kind === "plan";
    const evidence: MissionEvidence | null = planning ? await loadMissionEvidence(db, project.id) : null;
    const build = buildRunJob(project, policy.policy, state, run, number, Date.now(), evidence);
    const tracing = this.deps.tracing;
    // With traces on, the job opens the run's trace: every span of the run joins it.
    return build.ok && tracing
      ? { ok: true, job: { ...build.job, traceparent: tracing.newRunTrace() } }
      : build;
  }

  private async misconfigured(
    projectId: string,
    run: Run,
    build: Extract<JobBuild, { ok: false }>,
  ): Promise<void> {
    this.deps.logger.warn({ projectId, runId: run.id, reason: build.reason }, build.message);
    await this.deps.apply(projectId, {
      kind: "run-misconfigured",
      runId: run.id,
      reason: build.reason,
      message: build.message,
    });
  }
}
