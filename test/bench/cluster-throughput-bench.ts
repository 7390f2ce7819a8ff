/**
 * End-to-end throughput and per-job orchestration overhead of the real cluster: a
 * coordinator process and worker processes (bwrap sandbox) driving N projects whose tasks
 * use a trivial shell harness (no Node start per run), each task executed, reviewed by a
 * fresh agent and landed on main. The services run from the production build unless
 * `services` is "tsx" (bench-services.ts).
 */
import { readFile } from "node:fs/promises";
import { listProjects, loadProjectSnapshot, POSTGRES_NOTIFY_CHANNEL, sql } from "@overseer/db";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { type ServiceProcess, startService } from "../support/service-process.ts";
import { benchCluster } from "./bench-cluster.ts";
import { benchServices, type ServicesMode, servicesCondition } from "./bench-services.ts";
import { type Percentiles, percentiles } from "./stats.ts";

/**
 * The whole harness: one `sh` process, finishing with the bundled shell `overseer-agent`. It
 * leaves its prompt unread, as the git floor's `sh -c true` does (no `cat` to drain it: one
 * process more per run): the worker's prompt write ignores EPIPE and a prompt that fits the
 * pipe buffer is simply dropped with the pipe (harness-runner.test.ts, "never reads a prompt").
 */
export const TRIVIAL_HARNESS = [
  "/bin/sh",
  "-c",
  [
    'if [ "$OVERSEER_ACTION" = review ]; then exec overseer-agent approve; fi',
    'echo "$OVERSEER_AGENT_ID" > "work-$OVERSEER_TASK_ID.txt"',
    'exec overseer-agent submit --message "Work on $OVERSEER_TASK_ID"',
  ].join("\n"),
];

export interface ThroughputOptions {
  projects: number;
  tasksPerProject: number;
  workers: number;
  workerConcurrency: number;
  sandbox: "bwrap" | "none";
  timeoutMs?: number;
  /** More environment for the coordinator and workers (the tracing bench's OTEL_* variables). */
  env?: Record<string, string>;
  /** The production build (default) or TypeScript through tsx. */
  services?: ServicesMode;
}

export interface ThroughputResult {
  projects: number;
  tasks: number;
  runs: number;
  workers: number;
  slots: number;
  sandbox: string;
  /** How the services ran (bench-services.ts). */
  services: string;
  wallSeconds: number;
  tasksPerSecond: number;
  queuedToSpawnedMs: Percentiles;
  exitedToCommittedMs: Percentiles;
  workerPhasesP50Ms: Record<string, number>;
  /** Milestone-to-milestone p50s: enqueued→picked, exited→reported, reported→received, received→committed. */
  pipelineP50Ms: Record<string, number>;
  coordinatorRssMb: number;
  workerRssMb: number;
}

export async function benchThroughput(options: ThroughputOptions): Promise<ThroughputResult> {
  const cluster = await benchCluster(options.sandbox);
  const processes: ServiceProcess[] = [];
  try {
    const config = ClusterFixture.fakeRunnerConfig({ argv: TRIVIAL_HARNESS, timeout_seconds: 120 });
    for (let p = 0; p < options.projects; p++) {
      const tasks = Array.from({ length: options.tasksPerProject }, (_, i) => ({
        id: `S00-${String(i + 1).padStart(3, "0")}`,
        title: `Bench task ${i + 1}`,
        scope: ["**"],
      }));
      await cluster.addProject({ id: `bench-${p}`, tasks, runnerConfig: config, start: false });
    }
    const env = cluster.env({
      LOG_LEVEL: "warn",
      OVERSEER_WORKER_CONCURRENCY: String(options.workerConcurrency),
      OVERSEER_LEASE_TTL_MS: "15000",
      OVERSEER_RECONCILE_INTERVAL_MS: "5000",
      OVERSEER_WORKER_LOCK_MS: "30000",
      OVERSEER_STALLED_INTERVAL_MS: "15000",
      ...options.env,
    });
    const built = await benchServices(options.services ?? "build");
    const coordinator = startService("coordinator", env, built);
    processes.push(coordinator);
    const workers = Array.from({ length: options.workers }, (_, i) =>
      startService("worker", { ...env, OVERSEER_WORKER_ID: `bench-w${i}` }, built),
    );
    processes.push(...workers);
    await waitForWorkers(cluster, options.workers);

    const rss = { coordinator: 0, worker: 0 };
    const sampler = setInterval(() => {
      void sampleRss(coordinator).then((mb) => (rss.coordinator = Math.max(rss.coordinator, mb)));
      for (const w of workers) void sampleRss(w).then((mb) => (rss.worker = Math.max(rss.worker, mb)));
    }, 200);

    const started = performance.now();
    const ids = (await listProjects(cluster.scratch.db)).map((p) => p.id);
    await cluster.scratch.db.updateTable("projects").set({ status: "active", sessions_used: 0 }).execute();
    await sql`SELECT pg_notify(${POSTGRES_NOTIFY_CHANNEL}, id) FROM projects`.execute(cluster.scratch.db);
    const deadline = Date.now() + (options.timeoutMs ?? 600_000);
    let wake: () => void = () => {};
    const listener = await cluster.scratch.notifications.listen(POSTGRES_NOTIFY_CHANNEL, () => wake());
    try {
      for (;;) {
        const done = await cluster.scratch.db
          .selectFrom("tasks")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("status", "=", "done")
          .executeTakeFirstOrThrow();
        if (Number(done.n) >= options.projects * options.tasksPerProject) break;
        if (Date.now() > deadline) {
          const stuck = await loadProjectSnapshot(cluster.scratch.db, ids[0] as string);
          throw new Error(
            `bench timed out: ${done.n} tasks done; first project: ${[...stuck.tasks.values()].map((t) => t.status).join(",")}`,
          );
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 250).unref();
        });
      }
    } finally {
      await listener.unlisten();
      clearInterval(sampler);
    }
    const wallSeconds = (performance.now() - started) / 1000;
    const runs = await cluster.scratch.db
      .selectFrom("runs")
      .select(["timing"])
      .where("status", "=", "finished")
      .execute();
    const timings = runs.map((r) => r.timing as Record<string, number | null | Record<string, number>>);
    const num = (v: unknown) => (typeof v === "number" ? v : Number.NaN);
    const queued = timings.map((t) => num(t.spawnedAt) - num(t.enqueuedAt)).filter(Number.isFinite);
    const committed = timings.map((t) => num(t.committed) - num(t.exitedAt)).filter(Number.isFinite);
    const phaseNames = new Set(
      timings.flatMap((t) => Object.keys((t.phases as Record<string, number>) ?? {})),
    );
    const workerPhasesP50Ms: Record<string, number> = {};
    for (const name of phaseNames) {
      workerPhasesP50Ms[name] = percentiles(
        timings.map((t) => num((t.phases as Record<string, number> | undefined)?.[name])),
      ).p50;
    }
    const gap = (from: string, to: string) => percentiles(timings.map((t) => num(t[to]) - num(t[from]))).p50;
    const pipelineP50Ms = {
      enqueuedToPicked: gap("enqueuedAt", "pickedAt"),
      pickedToSpawned: gap("pickedAt", "spawnedAt"),
      exitedToReported: gap("exitedAt", "reportedAt"),
      reportedToReceived: gap("reportedAt", "received"),
      receivedToCommitted: gap("received", "committed"),
    };
    return {
      projects: options.projects,
      tasks: options.projects * options.tasksPerProject,
      runs: runs.length,
      workers: options.workers,
      slots: options.workers * options.workerConcurrency,
      sandbox: options.sandbox,
      services: servicesCondition(options.services ?? "build"),
      wallSeconds: round(wallSeconds),
      tasksPerSecond: round((options.projects * options.tasksPerProject) / wallSeconds),
      queuedToSpawnedMs: percentiles(queued),
      exitedToCommittedMs: percentiles(committed),
      workerPhasesP50Ms,
      pipelineP50Ms,
      coordinatorRssMb: round(rss.coordinator),
      workerRssMb: round(rss.worker),
    };
  } finally {
    await Promise.all(processes.map((p) => p.kill("SIGTERM")));
    await cluster.teardown();
  }
}

async function waitForWorkers(cluster: ClusterFixture, n: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const live = await cluster.redis.hlen(`${cluster.prefix}:workers`);
    if (live >= n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("workers did not start within 60 s");
}

async function sampleRss(p: ServiceProcess): Promise<number> {
  if (!p.child.pid) return 0;
  const status = await readFile(`/proc/${p.child.pid}/status`, "utf8").catch(() => "");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
