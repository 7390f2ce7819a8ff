/**
 * A real cluster for end-to-end tests and benchmarks: a scratch Postgres database, a Redis
 * key prefix of its own, a temp data dir, bare git repositories, and an in-process
 * coordinator and workers (or none, when a test spawns them as processes).
 */
import { randomBytes } from "node:crypto";
import { cp, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Coordinator, type CoordinatorOptions, resolveCoordinatorOptions } from "@overseer/coordinator";
import { createProject, createScratchDatabase, type ScratchDatabase } from "@overseer/db";
import type { ProjectState, RepoKind } from "@overseer/domain";
import { initBareRepo, repoKindOf, runGit } from "@overseer/git";
import { fakeHarnessPath } from "@overseer/harness";
import { parseRunnerConfig } from "@overseer/project-config";
import {
  createRedis,
  LiveChannel,
  type Redis,
  type RedisTarget,
  RunQueues,
  resolveLiveOptions,
  resolveQueueOptions,
  WorkerRegistry,
} from "@overseer/queue";
import type { Cidr } from "@overseer/run-contract";
import { createLogger, type Logger } from "@overseer/runtime";
import {
  createSandboxDriver,
  ImageCache,
  type ImageCacheOptions,
  type SandboxDriver,
} from "@overseer/sandbox";
import { validateTaskList } from "@overseer/task-files";
import { dropRunQueues } from "@overseer/test-support";
import { importTasks, startProject, TransitionApplier } from "@overseer/transitions";
import {
  AgentCliCache,
  postgresRunFence,
  resolveWorkerOptions,
  sandboxWrapFor,
  WorkerService,
} from "@overseer/worker";
import pino from "pino";
import { afterAll, afterEach, beforeAll } from "vitest";
import { type ServiceProcess, startService } from "./service-process.ts";
import { waitForState } from "./wait-for.ts";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export interface ClusterOptions {
  /** Redis of this cluster. Default REDIS_URL or the local server. */
  redisUrl?: string;
  /** A Redis Cluster or Sentinel group (redis-topology.ts) instead of `redisUrl`. */
  redis?: RedisTarget;
  /** Postgres server the scratch database is created on. Default DATABASE_URL or the local server. */
  databaseUrl?: string;
  /** Sandbox driver for in-process workers. Default `bwrap`. */
  sandbox?: "bwrap" | "gvisor" | "none";
  /** Lease TTL, small in tests so failover is quick. Default 3000 ms. */
  leaseTtlMs?: number;
  reconcileIntervalMs?: number;
  logLevel?: string;
  /** Internal ranges the workers' egress proxy may reach (OVERSEER_EGRESS_ALLOW_PRIVATE). Default none. */
  egressAllowPrivate?: readonly Cidr[];
  /** The workers' image cache (runs of projects with `sandbox.image`), in the data dir. Default none. */
  images?: Omit<ImageCacheOptions, "dir">;
  /** Agent CLIs of `.overseer/environment.yml` (agent.npm) installed with this npm. Default: none (refused). */
  agentClis?: { npmPath?: string; npmEnv?: Record<string, string> };
}

export interface ProjectSpec {
  id: string;
  tasks: unknown[];
  runnerConfig?: Record<string, unknown>;
  concurrency?: number;
  files?: Record<string, string>;
  start?: boolean;
  /** The remote the project names for its bare repository (default: the repository's path). */
  remote?: (repoPath: string) => string;
  /**
   * A bare repository (`createRepo`) copied file by file for this project instead of one made
   * with git: many projects with the same start for the cost of a copy each (the scale bench's
   * thousands). Each project still has a repository of its own. Ignored with `workingCopy`.
   */
  template?: string;
  /**
   * Register a non-bare clone with `main` checked out (a user's working copy) instead of a
   * bare repository. Default false.
   */
  workingCopy?: boolean;
}

export class ClusterFixture {
  readonly prefix = `${process.env.OVERSEER_TEST_RUN ?? "local"}-t${randomBytes(4).toString("hex")}`;
  readonly logger: Logger;
  scratch!: ScratchDatabase;
  redis!: Redis;
  queues!: RunQueues;
  live!: LiveChannel;
  dataDir!: string;
  private readonly closers: (() => Promise<void>)[] = [];
  readonly coordinators: Coordinator[] = [];
  readonly workers: WorkerService[] = [];
  private driver: SandboxDriver | null = null;

  readonly redisUrl: string;
  readonly redisTarget: RedisTarget;

  constructor(readonly options: ClusterOptions = {}) {
    this.redisTarget = options.redis ?? { url: options.redisUrl ?? REDIS_URL };
    this.redisUrl = this.redisTarget.url;
    this.logger = options.logLevel
      ? createLogger({ name: "test", level: options.logLevel })
      : (pino({ level: "silent" }) as unknown as Logger);
  }

  async setup(): Promise<this> {
    this.scratch = await createScratchDatabase(this.options.databaseUrl);
    this.dataDir = await mkdtemp(path.join(tmpdir(), "overseer-e2e-"));
    this.redis = createRedis(this.redisTarget);
    this.queues = new RunQueues(
      this.redis,
      resolveQueueOptions({ prefix: this.prefix, infraBackoffMs: 200 }),
    );
    this.live = new LiveChannel(this.redis, resolveLiveOptions({ prefix: this.prefix }));
    return this;
  }

  /** Environment for spawned service processes sharing this fixture's database and prefix. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      DATABASE_URL: this.scratch.url,
      REDIS_URL: this.redisUrl,
      ...(this.redisTarget.clusterNodes
        ? { REDIS_CLUSTER_NODES: this.redisTarget.clusterNodes.join(",") }
        : {}),
      ...(this.redisTarget.sentinels
        ? {
            REDIS_SENTINELS: this.redisTarget.sentinels.join(","),
            REDIS_SENTINEL_MASTER: this.redisTarget.sentinelMaster ?? "mymaster",
          }
        : {}),
      OVERSEER_QUEUE_PREFIX: this.prefix,
      OVERSEER_DATA_DIR: this.dataDir,
      OVERSEER_LEASE_TTL_MS: String(this.options.leaseTtlMs ?? 3000),
      OVERSEER_HEARTBEAT_INTERVAL_MS: "500",
      OVERSEER_RECONCILE_INTERVAL_MS: String(this.options.reconcileIntervalMs ?? 1000),
      OVERSEER_WORKER_LOCK_MS: "3000",
      OVERSEER_WORKER_LOCK_RENEW_MS: "750",
      OVERSEER_STALLED_INTERVAL_MS: "1000",
      OVERSEER_KILL_GRACE_MS: "500",
      // A SIGTERM'd worker hands its runs back soon (service-process.ts kills after 10 s).
      OVERSEER_WORKER_DRAIN_MS: "2000",
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
      ...(this.options.sandbox === "none"
        ? { OVERSEER_SANDBOX: "none", OVERSEER_SANDBOX_UNSAFE_NONE: "1" }
        : {}),
      ...extra,
    };
  }

  async createRepo(
    name: string,
    files: Record<string, string> = { "README.md": `# ${name}\n` },
  ): Promise<string> {
    const repo = path.join(this.dataDir, "repos", `${name}.git`);
    await initBareRepo(repo, { initialFiles: files, branch: "main" });
    return repo;
  }

  /** A copy of the bare repository `template` (a file copy, no git process) named `name`. */
  async copyRepo(template: string, name: string): Promise<string> {
    const repo = path.join(this.dataDir, "repos", `${name}.git`);
    await cp(template, repo, { recursive: true, errorOnExist: true, force: false });
    return repo;
  }

  /**
   * A user's working copy: a non-bare clone of a fresh bare repository (`createRepo`), with
   * `main` checked out. Returns the clone's path.
   */
  async createWorkingCopy(
    name: string,
    files: Record<string, string> = { "README.md": `# ${name}\n` },
  ): Promise<string> {
    const origin = await this.createRepo(`${name}-origin`, files);
    const copy = path.join(this.dataDir, "copies", name);
    await mkdir(path.dirname(copy), { recursive: true });
    await runGit(["clone", "--quiet", "--", origin, copy], { cwd: path.dirname(copy) });
    return copy;
  }

  /** Runner config using the bundled fake harness. */
  static fakeRunnerConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return parseRunnerConfig(
      {
        argv: [process.execPath, fakeHarnessPath()],
        timeout_seconds: 60,
        retry_backoff_seconds: 0.2,
        ...extra,
      },
      "test",
    ) as unknown as Record<string, unknown>;
  }

  private readonly templateKinds = new Map<string, Promise<RepoKind>>();

  async addProject(spec: ProjectSpec): Promise<string> {
    const template = spec.workingCopy ? undefined : spec.template;
    const repo = spec.workingCopy
      ? await this.createWorkingCopy(spec.id, spec.files)
      : template !== undefined
        ? await this.copyRepo(template, spec.id)
        : await this.createRepo(spec.id, spec.files);
    const runnerConfig = spec.runnerConfig ?? ClusterFixture.fakeRunnerConfig();
    // A copy is what its template is: asked once.
    let repoKind = template !== undefined ? this.templateKinds.get(template) : undefined;
    if (repoKind === undefined) {
      repoKind = repoKindOf(template ?? repo, "main");
      if (template !== undefined) this.templateKinds.set(template, repoKind);
    }
    await createProject(this.scratch.db, {
      id: spec.id,
      repo: spec.remote ? spec.remote(repo) : repo,
      // What `overseer init` records: a working copy's work lands on overseer/main.
      repoKind: await repoKind,
      runnerConfig,
      concurrency: spec.concurrency ?? 1,
      objective: `Test project ${spec.id}`,
    });
    const parsed = validateTaskList(spec.tasks, spec.id);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    await importTasks(new TransitionApplier({ db: this.scratch.db }), spec.id, parsed.tasks);
    if (spec.start !== false) await startProject(new TransitionApplier({ db: this.scratch.db }), spec.id);
    return repo;
  }

  async startCoordinator(
    id = `coord-${this.coordinators.length}`,
    extra: CoordinatorOptions = {},
  ): Promise<Coordinator> {
    const workerConnection = createRedis(this.redisTarget);
    const coordinator = new Coordinator(
      {
        db: this.scratch.db,
        notifications: this.scratch.notifications,
        workerConnection,
        queues: this.queues,
        live: this.live,
        logger: this.logger,
      },
      resolveCoordinatorOptions({
        id,
        prefix: this.prefix,
        leaseTtlMs: this.options.leaseTtlMs ?? 3000,
        reconcileIntervalMs: this.options.reconcileIntervalMs ?? 1000,
        ...extra,
      }),
    );
    await coordinator.start();
    this.coordinators.push(coordinator);
    this.closers.push(async () => {
      await coordinator.stop();
      workerConnection.disconnect();
    });
    return coordinator;
  }

  sandboxDriver(): SandboxDriver {
    this.driver ??= createSandboxDriver(this.options.sandbox ?? "bwrap", {
      allowUnsafeNone: this.options.sandbox === "none",
      ...(this.options.egressAllowPrivate
        ? { bwrap: { egress: { allowPrivateCidrs: this.options.egressAllowPrivate } } }
        : {}),
    });
    return this.driver;
  }

  private images: ImageCache | null = null;

  /** The cluster's image cache (one for its workers, as workers on one host may share it). */
  imageCache(options: Omit<ImageCacheOptions, "dir">): ImageCache {
    this.images ??= new ImageCache({ dir: path.join(this.dataDir, "images"), ...options });
    return this.images;
  }

  async startWorker(concurrency = 2): Promise<WorkerService> {
    const driver = this.sandboxDriver();
    const workerConnection = createRedis(this.redisTarget);
    const subscriber = createRedis(this.redisTarget);
    const worker = new WorkerService(
      {
        workerConnection,
        subscriber,
        queues: this.queues,
        live: this.live,
        registry: new WorkerRegistry(this.redis, this.prefix),
        logger: this.logger,
        fence: postgresRunFence(this.scratch.db),
      },
      resolveWorkerOptions({
        id: `worker-${this.workers.length}`,
        concurrency,
        dataDir: this.dataDir,
        prefix: this.prefix,
        heartbeatIntervalMs: 500,
        lockDurationMs: 3000,
        lockRenewMs: 750,
        stalledIntervalMs: 1000,
        killGraceMs: 500,
        sandboxName: driver.name,
        unsafe: driver.name === "none",
        sandboxFor: async (job, paths, image) =>
          sandboxWrapFor(driver, job, paths, this.dataDir, image ?? null),
        ...(this.options.images ? { imageFor: imageSource(this.imageCache(this.options.images)) } : {}),
        ...(this.options.agentClis
          ? {
              agentCliFor: agentCliSource(
                new AgentCliCache({
                  dir: path.join(this.dataDir, "images", "agents"),
                  ...this.options.agentClis,
                }),
              ),
            }
          : {}),
      }),
    );
    await worker.start();
    this.workers.push(worker);
    this.closers.push(async () => {
      await worker.stop(0);
      workerConnection.disconnect();
      subscriber.disconnect();
    });
    return worker;
  }

  /** `waitForState` on this cluster's database: the project's state once `check` holds. */
  waitForProject(
    projectId: string,
    check: (state: ProjectState) => boolean,
    timeoutMs?: number,
  ): Promise<ProjectState> {
    return waitForState(this.scratch.db, this.scratch.notifications, projectId, check, timeoutMs);
  }

  onClose(fn: () => Promise<void>): void {
    this.closers.push(fn);
  }

  async teardown(): Promise<void> {
    for (const close of this.closers.reverse()) await close().catch(() => undefined);
    await dropRunQueues(this.queues, this.redis, this.prefix);
    await this.driver?.dispose().catch(() => undefined);
    await this.scratch?.drop().catch(() => undefined);
    if (this.dataDir) await rm(this.dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

function agentCliSource(cache: AgentCliCache) {
  return (pkg: string, digest: string | null) => cache.install(pkg, digest);
}

function imageSource(cache: ImageCache) {
  return (reference: string) => cache.acquire(reference);
}

/**
 * A cluster for the enclosing `describe` block: set up with one in-process coordinator and a
 * worker of `concurrency` slots in `beforeAll`, torn down in `afterAll`.
 */
export function useRunningCluster(options: ClusterOptions, concurrency: number): ClusterFixture {
  const cluster = new ClusterFixture(options);
  beforeAll(async () => {
    await cluster.setup();
    await cluster.startCoordinator();
    await cluster.startWorker(concurrency);
  });
  afterAll(() => cluster.teardown());
  return cluster;
}

/**
 * What one test of a file starts for itself, released after each test in this order: service
 * processes (killed), clusters (torn down), then `cleanups` (private servers it started).
 */
export class TestResources {
  private readonly processes: ServiceProcess[] = [];
  private readonly clusters: ClusterFixture[] = [];
  private readonly cleanups: (() => Promise<void>)[] = [];

  /** A cluster set up with `options` (no coordinator or worker yet). */
  async cluster(options: ClusterOptions = {}): Promise<ClusterFixture> {
    const cluster = new ClusterFixture(options);
    this.clusters.push(cluster);
    return cluster.setup();
  }

  /** A coordinator or worker process (`service-process.ts`), killed after the test. */
  service(name: Parameters<typeof startService>[0], env: Record<string, string>): ServiceProcess {
    const started = startService(name, env);
    this.processes.push(started);
    return started;
  }

  onRelease(cleanup: () => Promise<void>): void {
    this.cleanups.push(cleanup);
  }

  async release(): Promise<void> {
    for (const p of this.processes.splice(0)) await p.kill("SIGKILL");
    for (const c of this.clusters.splice(0)) await c.teardown();
    for (const c of this.cleanups.splice(0)) await c();
  }
}

/** `TestResources` released after each test of the file. */
export function useTestResources(): TestResources {
  const resources = new TestResources();
  afterEach(() => resources.release());
  return resources;
}

/** A task (role `general`, scope `src/**`) whose fake agent follows `script`, its `overseer-fake` block. */
export function scriptedTask(id: string, script: string, fields: Record<string, unknown> = {}) {
  return {
    id,
    title: `Task ${id}`,
    scope: ["src/**"],
    body: `\`\`\`overseer-fake\n${script}\n\`\`\`\n`,
    ...fields,
  };
}
