/**
 * The coordinator's forge runner (PR-DESIGN "Loop"; README "Land through pull requests"):
 * host-side, it alone holds the forge token. It turns the pull request records in Postgres
 * into forge work and what the forge says back into domain commands, each applied in one
 * transaction through the one apply path.
 *
 * Level-triggered: every scheduling pass of a pull_request project (`reconcile`) looks at its
 * tasks' pull requests and asks the `forge` queue for what they need — `ensure` for one still
 * opening (a sync that finds the forge's base differing from the recorded one, after a stacked
 * prerequisite merged, asks for it too), `close` for an open one whose task was cancelled, `delivery` for each
 * stored webhook delivery not applied yet, and a delayed `sync` (a poll) per open pull request
 * every `poll_seconds`; passes run only when something changed, so each sync that ends asks
 * for its task's next poll too (#pollAgain). The queue keeps one job per identity (a task's sync, ensure or merge)
 * waiting and one running, and an ask while it runs becomes one re-run after it (ForgeQueue),
 * so passes may repeat freely and no ask is lost; a project without open pull requests costs
 * no forge call at all.
 */
import { createHash } from "node:crypto";
import {
  type Db,
  getPullRequestRow,
  getRun,
  listUnappliedForgeDeliveries,
  type ProjectRow,
  recordPullRequestPoll,
  requireProject,
} from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { createForgeAdapter, ForgeCallCounter } from "@overseer/forge";
import {
  FORGE_QUEUE,
  type ForgeQueue,
  listenForBullmqErrors,
  queueKeyPrefix,
  type Redis,
} from "@overseer/queue";
import { type ForgeJob, forgeJobSchema } from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";
import type { TransitionApplier } from "@overseer/transitions";
import { Worker } from "bullmq";
import type { ProjectPolicies, ProjectPolicy } from "../project-policy.ts";
import type { ForgeJobContext } from "./forge-job-context.ts";
import {
  applyDelivery,
  closePull,
  ensurePull,
  mergePull,
  recordMergeIfMerged,
  syncPull,
} from "./forge-jobs.ts";

export interface ForgeRunnerDeps {
  readonly db: Db;
  readonly transitions: TransitionApplier;
  readonly queue: ForgeQueue;
  readonly workerConnection: Redis;
  readonly policies: ProjectPolicies;
  readonly logger: Logger;
}

export interface ForgeRunnerOptions {
  readonly prefix: string;
  /** Forge jobs run in parallel by this replica. */
  readonly concurrency: number;
  /** The adapters' backoff unit after a 5xx (GitHub: n² × this; GitLab/Gitea: exponential). */
  readonly retryBaseMs: number;
  /** Least ms between two GitHub writes of one token (`OVERSEER_GITHUB_WRITE_INTERVAL_MS`). Default 1000. */
  readonly githubWriteIntervalMs?: number;
  /** The dashboard's base URL for run links in pull request bodies, or null. */
  readonly dashboardUrl: string | null;
}

export class ForgeRunner {
  readonly #deps: ForgeRunnerDeps;
  readonly #options: ForgeRunnerOptions;
  readonly #logins = new Map<string, Promise<string>>();
  #worker: Worker | null = null;

  constructor(deps: ForgeRunnerDeps, options: ForgeRunnerOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  start(): void {
    this.#worker = new Worker(FORGE_QUEUE, (job) => this.process(job.data), {
      connection: this.#deps.workerConnection,
      prefix: queueKeyPrefix(this.#options.prefix),
      concurrency: this.#options.concurrency,
      autorun: true,
    });
    listenForBullmqErrors(this.#worker, this.#deps.workerConnection, this.#deps.logger, "forge worker");
    // Polls keep themselves going: a sync that ended asks for the task's next poll.
    this.#worker.on("completed", (job) => {
      void this.#pollAgain(job.data).catch((e) =>
        this.#deps.logger.warn({ err: e, job: job.id }, "could not ask for the next poll"),
      );
    });
    this.#worker.on("failed", (job, error) => {
      this.#deps.logger.warn({ err: error, job: job?.id, name: job?.name }, "forge job failed");
      if (job) {
        void this.#deps.queue
          .noteFailed(job)
          .catch((e) => this.#deps.logger.warn({ err: e }, "could not ask again for a failed forge job"));
      }
    });
  }

  async stop(): Promise<void> {
    await this.#worker?.close();
    this.#worker = null;
  }

  /**
   * Asks the forge queue for what the project's pull requests need (see the file comment).
   * Called by the scheduling pass with the state its claim produced; pull_request projects only.
   */
  async reconcile(project: ProjectRow, state: ProjectState, policy: ProjectPolicy): Promise<void> {
    if (policy.landing.mode !== "pull_request") return;
    const { queue } = this.#deps;
    const projectId = project.id;
    for (const delivery of await listUnappliedForgeDeliveries(this.#deps.db, projectId, 100)) {
      await queue.add({
        v: 1,
        kind: "delivery",
        projectId,
        forge: delivery.forge,
        deliveryId: delivery.delivery_id,
      });
    }
    const pollMs = policy.landing.pullRequest.pollSeconds * 1000;
    for (const task of state.tasks.values()) {
      const pr = task.pullRequest;
      if (pr === null) continue;
      if (pr.status === "opening") {
        await queue.add({ v: 1, kind: "ensure", projectId, taskId: task.id, headSha: pr.headSha });
      }
      if (pr.status !== "open" || pr.number === null) continue;
      if (task.status === "cancelled") {
        await queue.add({ v: 1, kind: "close", projectId, taskId: task.id, number: pr.number });
      } else if (pollMs > 0) {
        await queue.addPoll(projectId, task.id, pollMs);
      }
    }
  }

  /** Asks for the `ensure` of the pull request of the run's task, for the head it approved. */
  async requestEnsure(projectId: string, runId: string, headSha: string): Promise<void> {
    const run = await getRun(this.#deps.db, runId);
    if (run) await this.#deps.queue.add({ v: 1, kind: "ensure", projectId, taskId: run.task_id, headSha });
  }

  /**
   * After a sync: the task's next poll, while its pull request is open. Passes run only when
   * something changed (coordinator.ts), so a quiet pull request (CI running, a reviewer away)
   * would otherwise never be read again without a webhook.
   */
  async #pollAgain(data: unknown): Promise<void> {
    const job = forgeJobSchema.safeParse(data);
    if (!job.success || job.data.kind !== "sync") return;
    const { projectId, taskId } = job.data;
    const policy = this.#deps.policies.of(await requireProject(this.#deps.db, projectId));
    const pollMs = policy.landing.pullRequest.pollSeconds * 1000;
    if (policy.landing.mode !== "pull_request" || pollMs <= 0) return;
    const row = await getPullRequestRow(this.#deps.db, projectId, taskId);
    if (row?.status === "open") await this.#deps.queue.addPoll(projectId, taskId, pollMs);
  }

  /**
   * Whether the task's open pull request already merged on the forge; a merge found is recorded
   * (`recordMergeIfMerged`). False without a pull request open in Postgres, or in push mode.
   */
  async recordMergeIfMerged(projectId: string, taskId: string): Promise<boolean> {
    const project = await requireProject(this.#deps.db, projectId);
    const policy = this.#deps.policies.of(project);
    if (policy.landing.mode !== "pull_request" || policy.forge === null) return false;
    return recordMergeIfMerged(this.#context(project, policy), taskId);
  }

  /** Runs one forge job (the queue's processor; tests call it directly too). */
  async process(data: unknown): Promise<void> {
    const job = forgeJobSchema.parse(data);
    const project = await requireProject(this.#deps.db, job.projectId);
    const policy = this.#deps.policies.of(project);
    if (policy.landing.mode !== "pull_request" || policy.forge === null) return;
    const ctx = this.#context(project, policy);
    await dispatch(ctx, job);
  }

  #context(project: ProjectRow, policy: ProjectPolicy): ForgeJobContext {
    const forge = policy.forge;
    if (forge === null) throw new Error(`project ${project.id} has no forge`);
    const calls = new ForgeCallCounter();
    const adapter = createForgeAdapter({
      forge: forge.kind,
      url: forge.url,
      repository: forge.repository,
      auth: forge.auth,
      counter: calls,
      retry: { baseDelayMs: this.#options.retryBaseMs },
      githubWriteIntervalMs: this.#options.githubWriteIntervalMs,
    });
    // The account is the credentials': read once per project and credentials (not per project
    // version, which every transition bumps: that re-read it after each step of the loop).
    const credentials = createHash("sha256").update(JSON.stringify(forge.auth)).digest("hex");
    const loginKey = `${project.id}\n${forge.kind}\n${forge.url}\n${forge.repository}\n${credentials}`;
    const db = this.#deps.db;
    let recorded = 0;
    let recordedNotModified = 0;
    return {
      db,
      project,
      policy,
      forge: adapter,
      calls,
      queue: this.#deps.queue,
      logger: this.#deps.logger.child({ projectId: project.id, forge: forge.kind }),
      dashboardUrl: this.#options.dashboardUrl,
      login: () => {
        let login = this.#logins.get(loginKey);
        if (!login) {
          login = adapter.checkTokenRights().then((rights) => rights.login);
          login.catch(() => this.#logins.delete(loginKey));
          this.#logins.set(loginKey, login);
        }
        return login;
      },
      apply: async (command) => {
        await this.#deps.transitions.apply(project.id, command);
      },
      record: async (taskId, etags = {}) => {
        const apiCalls = calls.total - recorded;
        const notModified = calls.notModified - recordedNotModified;
        recorded = calls.total;
        recordedNotModified = calls.notModified;
        await recordPullRequestPoll(db, project.id, taskId, {
          apiCalls,
          notModified,
          ...(etags.pull !== undefined ? { etagPull: etags.pull } : {}),
          ...(etags.checks !== undefined ? { etagChecks: etags.checks } : {}),
          ...(etags.reviews !== undefined ? { etagReviews: etags.reviews } : {}),
        });
      },
    };
  }
}

function dispatch(ctx: ForgeJobContext, job: ForgeJob): Promise<void> {
  switch (job.kind) {
    case "ensure":
      return ensurePull(ctx, job.taskId);
    case "sync":
      return syncPull(ctx, job.taskId);
    case "delivery":
      return applyDelivery(ctx, job.forge, job.deliveryId);
    case "merge":
      return mergePull(ctx, job.taskId);
    case "close":
      return closePull(ctx, job.taskId, job.number);
  }
}
