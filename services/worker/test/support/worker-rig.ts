/**
 * A real worker for service-level tests: a WorkerService taking real BullMQ jobs from the
 * shared Redis (under a key prefix of its own), running each job's harness in a real bwrap
 * sandbox against a bare git repository in a temp dir. Jobs are written by the test, so a
 * "hostile agent" is a shell script given as the harness argv.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { initBareRepo, runGit } from "@overseer/git";
import {
  createRedis,
  LiveChannel,
  type LiveOptions,
  type Redis,
  RunQueues,
  resolveLiveOptions,
  resolveQueueOptions,
  WorkerRegistry,
} from "@overseer/queue";
import { type RunJob, type RunResult, runResultSchema } from "@overseer/run-contract";
import { createLogger } from "@overseer/runtime";
import { createSandboxDriver, type SandboxDriver } from "@overseer/sandbox";
import { dropRunQueues, runJobFixture } from "@overseer/test-support";
import { sandboxWrapFor } from "../../src/sandbox-wrap.ts";
import { resolveWorkerOptions, type WorkerServiceOptions } from "../../src/worker-options.ts";
import { WorkerService } from "../../src/worker-service.ts";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export class WorkerRig {
  /** `prefix`: another rig's, for a second worker on the same queues. Default a fresh one. */
  constructor(
    readonly prefix = `${process.env.OVERSEER_TEST_RUN ?? "local"}-wt${randomBytes(4).toString("hex")}`,
  ) {}

  readonly logger = createLogger({ name: "worker-test", level: process.env.TEST_LOG_LEVEL ?? "silent" });
  dir = "";
  dataDir = "";
  remote = "";
  redis!: Redis;
  queues!: RunQueues;
  worker!: WorkerService;
  private driver!: SandboxDriver;
  private readonly closers: (() => Promise<void>)[] = [];
  private runs = 0;

  live!: LiveChannel;

  /** `live` bounds the run log streams in Redis (defaults: those of `LiveChannel`). */
  async setup(
    options: Partial<WorkerServiceOptions> = {},
    live: Omit<LiveOptions, "prefix"> = {},
  ): Promise<this> {
    this.dir = await mkdtemp(path.join(tmpdir(), "overseer-worker-test-"));
    this.dataDir = path.join(this.dir, "data");
    this.remote = path.join(this.dir, "remote.git");
    await initBareRepo(this.remote, {
      initialFiles: { "README.md": "hello\n", "src/app.txt": "v1\n" },
      branch: "main",
    });
    this.redis = createRedis(REDIS_URL);
    this.queues = new RunQueues(
      this.redis,
      resolveQueueOptions({ prefix: this.prefix, infraBackoffMs: 200 }),
    );
    this.driver = createSandboxDriver("bwrap");
    const workerConnection = createRedis(REDIS_URL);
    const subscriber = createRedis(REDIS_URL);
    const driver = this.driver;
    this.live = new LiveChannel(this.redis, resolveLiveOptions({ ...live, prefix: this.prefix }));
    this.worker = new WorkerService(
      {
        workerConnection,
        subscriber,
        queues: this.queues,
        live: this.live,
        registry: new WorkerRegistry(this.redis, this.prefix),
        logger: this.logger,
      },
      resolveWorkerOptions({
        id: `worker-test-${this.prefix}`,
        concurrency: 1,
        dataDir: this.dataDir,
        prefix: this.prefix,
        heartbeatIntervalMs: 500,
        lockDurationMs: 30_000,
        stalledIntervalMs: 30_000,
        killGraceMs: 500,
        diskLimitBytes: 64 * 1024 * 1024,
        diskCheckMs: 50,
        sandboxName: "bwrap",
        unsafe: false,
        sandboxFor: async (job, paths) => sandboxWrapFor(driver, job, paths, this.dataDir),
        ...options,
      }),
    );
    await this.worker.start();
    this.closers.push(async () => {
      // No drain: a run still going is handed back at once (graceful-drain.test.ts drains).
      await this.worker.stop(0);
      workerConnection.disconnect();
      subscriber.disconnect();
    });
    return this;
  }

  async teardown(): Promise<void> {
    for (const close of this.closers.reverse()) await close().catch(() => undefined);
    await dropRunQueues(this.queues, this.redis, this.prefix);
    await this.driver?.dispose().catch(() => undefined);
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  /** What `overseer stop` leaves for the worker: the run's cancellation on the live channel. */
  async cancel(job: Pick<RunJob, "runId" | "projectId" | "taskId">): Promise<void> {
    await this.live.publishEvents([
      {
        id: "e1",
        projectId: job.projectId,
        taskId: job.taskId,
        runId: job.runId,
        type: "run.cancelled",
        data: {},
        createdAt: new Date().toISOString(),
      },
    ]);
  }

  /** A run job for task `taskId` whose harness is `sh -c script` (the hostile agent). */
  job(script: string, overrides: Partial<RunJob> = {}): RunJob {
    this.runs += 1;
    const taskId = overrides.taskId ?? "S00-001";
    const action = overrides.action ?? "execute";
    return runJobFixture({
      runId: `run-${this.prefix}-${this.runs}`,
      projectId: `p-${this.prefix}`,
      taskId,
      agentId: `${action}-backend-${this.prefix}${this.runs}`,
      action,
      role: "backend",
      repo: this.remote,
      executorAgentId: null,
      prompt: "Do the task.\n",
      argv: ["sh", "-c", script],
      timeoutMs: 60_000,
      scope: ["src/**"],
      metadataGlobs: [],
      author: { name: "Overseer Agent", email: "agent@overseer.local" },
      sandbox: { pidsMax: 256, memoryMb: 2048, cpuSeconds: 600, networkAllowHosts: [] },
      ...overrides,
    });
  }

  /**
   * A fresh reviewer's job for `taskId` that runs `overseer-agent approve` on the submitted
   * `expectedTaskHead`; `overrides` name the executor, the reviewer or the landing.
   */
  approveJob(taskId: string, expectedTaskHead: string | null, overrides: Partial<RunJob> = {}): RunJob {
    return this.job("overseer-agent approve", { taskId, action: "review", expectedTaskHead, ...overrides });
  }

  /** The run's result as its worker reported it on the results stream; null while none is there. */
  async reportedResult(runId: string): Promise<RunResult | null> {
    const messages = await this.queues.results.messages();
    const found = messages.find(
      (m) => (m as { kind?: string }).kind === "run-result" && (m as { runId?: string }).runId === runId,
    );
    return found ? runResultSchema.parse(found) : null;
  }

  /** Enqueues the job as a coordinator would and waits for the worker's reported result. */
  async run(job: RunJob, timeoutMs = 90_000): Promise<RunResult> {
    await this.queues.enqueueRun(job);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reported = await this.reportedResult(job.runId);
      if (reported) return reported;
      if (Date.now() > deadline) {
        const state = await this.queues.runJobState(job.runId, job.pool);
        throw new Error(
          `no result for ${job.runId} after ${timeoutMs} ms (run job: ${JSON.stringify(state)})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** `git <args>` against the bare remote; trimmed stdout, or null when the ref is missing. */
  async git(...args: string[]): Promise<string> {
    return (await runGit(args, { cwd: this.remote })).stdout.trim();
  }

  /** Commits `files` on `branch` of the remote from a throwaway clone, as another user would. */
  async commitOnRemote(branch: string, files: Record<string, string>, message: string): Promise<string> {
    const clone = await mkdtemp(path.join(this.dir, "clone-"));
    const env = {
      GIT_AUTHOR_NAME: "Someone Else",
      GIT_AUTHOR_EMAIL: "else@example.com",
      GIT_COMMITTER_NAME: "Someone Else",
      GIT_COMMITTER_EMAIL: "else@example.com",
    };
    const git = (...args: string[]) => runGit(args, { cwd: clone, env });
    try {
      await git("clone", "--quiet", "--branch", branch, this.remote, ".");
      for (const [name, content] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(clone, name)), { recursive: true });
        // A symlink committed earlier is replaced, never written through.
        await rm(path.join(clone, name), { force: true });
        await writeFile(path.join(clone, name), content);
      }
      await git("add", "--all");
      await git("commit", "--quiet", "-m", message);
      await git("push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
      return (await git("rev-parse", "HEAD")).stdout.trim();
    } finally {
      await rm(clone, { recursive: true, force: true });
    }
  }

  /** Commits a symlink `name` → `target` on `branch` of the remote (a hostile commit). */
  async commitSymlinkOnRemote(branch: string, name: string, target: string): Promise<string> {
    const clone = await mkdtemp(path.join(this.dir, "clone-"));
    const env = {
      GIT_AUTHOR_NAME: "x",
      GIT_AUTHOR_EMAIL: "x@example.com",
      GIT_COMMITTER_NAME: "x",
      GIT_COMMITTER_EMAIL: "x@example.com",
    };
    const git = (...args: string[]) => runGit(args, { cwd: clone, env });
    try {
      await git("clone", "--quiet", "--branch", branch, this.remote, ".");
      await rm(path.join(clone, name), { force: true });
      await mkdir(path.dirname(path.join(clone, name)), { recursive: true });
      await symlink(target, path.join(clone, name));
      await git("add", "--all");
      await git("commit", "--quiet", "-m", `symlink ${name}`);
      await git("push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
      return (await git("rev-parse", "HEAD")).stdout.trim();
    } finally {
      await rm(clone, { recursive: true, force: true });
    }
  }

  async head(branch: string): Promise<string | null> {
    const out = await runGit(["for-each-ref", "--format=%(objectname)", `refs/heads/${branch}`], {
      cwd: this.remote,
    });
    return out.stdout.trim() || null;
  }
}
