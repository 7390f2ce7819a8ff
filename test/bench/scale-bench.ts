/**
 * `npm run bench -- --only scale`: what the cluster costs per unit of change (issue 22), on a
 * private Postgres with `pg_stat_statements` and a private Redis, so that statements and
 * commands are counted exactly. The real coordinator and worker processes (bwrap sandbox,
 * the production lease, reconcile and lock settings) run four phases in one cluster:
 *
 *   one    1 project × `overheadTasks` tasks, one at a time: its overhead vs the git floor
 *   busy   `projects` projects × `tasksPerProject` trivial tasks at once: statements and
 *          commands per applied transition, coordinator CPU per transition, throughput vs floor
 *   idle   every project active with nothing to do, for `idleSeconds`: statements/s, commands/s
 *   long   `longRuns` runs that sleep, all running, for `windowSeconds`: Redis commands/s per
 *          running run (above the idle rate), Redis memory per running run (`used_memory` with
 *          them running minus before they started)
 *
 * A transition is one commit that wrote something: each sends exactly one NOTIFY, counted from
 * pg_stat_statements. Counts are exact; times depend on the machine's load.
 *
 * The busy phase also times a real gateway process answering the fleet and one project's
 * status, request after request, while the projects run (scale-gateway-probe.ts).
 *
 * Sizes (flags of bench-main.ts): the defaults finish in a few minutes on 2 cores. The issue's
 * sizes, one command each:
 *
 *   1,000 projects × 2 tasks, and the gateway's p99 while they run:
 *     npm run bench -- --only scale --scale-projects 1000 --scale-workers 2 --scale-worker-concurrency 16
 *   5,000 idle active projects (statements/s and coordinator CPU while nothing changes):
 *     npm run bench -- --only scale --scale-projects 5000 --scale-tasks 0 --scale-long-runs 0
 *   500 concurrent long runs (Redis commands/s and memory per running run):
 *     npm run bench -- --only scale --scale-projects 0 --scale-long-runs 500 --scale-workers 4 --scale-worker-concurrency 128
 *
 * A size with no busy transitions (`--scale-tasks 0`, `--scale-projects 0`) prints its
 * per-transition figures as null.
 */
import os from "node:os";
import { POSTGRES_NOTIFY_CHANNEL, sql } from "@overseer/db";
import { createRedis } from "@overseer/queue";
import { loadSettings } from "@overseer/settings";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { startPrivatePostgres } from "../support/private-postgres.ts";
import { startPrivateRedis } from "../support/private-redis.ts";
import { type ServiceProcess, startService } from "../support/service-process.ts";
import { TRIVIAL_HARNESS } from "./cluster-throughput-bench.ts";
import { benchGitFloor } from "./git-floor-bench.ts";
import {
  CommandCounter,
  type CommandTotals,
  processCpuMs,
  redisMemoryByKind,
  StatementCounter,
  type StatementTotals,
} from "./scale-counters.ts";
import { GatewayProbe } from "./scale-gateway-probe.ts";
import { type Percentiles, percentiles } from "./stats.ts";

export interface ScaleOptions {
  projects: number;
  tasksPerProject: number;
  overheadTasks: number;
  idleSeconds: number;
  longRuns: number;
  windowSeconds: number;
  workers: number;
  workerConcurrency: number;
  floorIterations: number;
}

export const SCALE_DEFAULTS: ScaleOptions = Object.freeze({
  projects: 20,
  tasksPerProject: 2,
  overheadTasks: 5,
  idleSeconds: 15,
  longRuns: 8,
  windowSeconds: 10,
  workers: 2,
  workerConcurrency: 4,
  floorIterations: 30,
});

const ROLES = { coordinator: "bench_coordinator", worker: "bench_worker" } as const;

/** One phase's counts: statements, commands, coordinator CPU and wall time. */
interface PhaseCounts {
  seconds: number;
  statements: StatementTotals;
  commands: CommandTotals;
  coordinatorCpuMs: number;
}

interface Figure {
  figure: string;
  value: number | null;
  goal: string;
  met: boolean | null;
}

export async function benchScale(options: ScaleOptions = SCALE_DEFAULTS): Promise<Record<string, unknown>> {
  if (options.longRuns > options.workers * options.workerConcurrency)
    throw new Error(
      `--scale-long-runs ${options.longRuns} needs as many worker slots; give --scale-workers × --scale-worker-concurrency at least that`,
    );
  const floor = await benchGitFloor(options.floorIterations);
  const postgres = await startPrivatePostgres({
    settings: {
      shared_preload_libraries: "pg_stat_statements",
      "pg_stat_statements.max": "10000",
      "pg_stat_statements.track_utility": "on",
    },
  });
  const redis = await startPrivateRedis();
  const defaults = loadSettings({});
  const cluster = await new ClusterFixture({
    databaseUrl: postgres.url,
    redisUrl: redis.url,
    sandbox: "bwrap",
    leaseTtlMs: defaults.leaseTtlMs,
    reconcileIntervalMs: defaults.reconcileIntervalMs,
  }).setup();
  const processes: ServiceProcess[] = [];
  const closers: (() => Promise<void>)[] = [];
  const monitor = createRedis(redis.url);
  try {
    const statements = new StatementCounter(cluster.scratch.db, Object.values(ROLES));
    await statements.install();
    const counters = { statements, commands: new CommandCounter(monitor) };
    await addProjects(cluster, options);
    const env = serviceEnv(cluster, options, defaults);
    const coordinator = startService("coordinator", {
      ...env,
      DATABASE_URL: roleUrl(cluster, ROLES.coordinator),
    });
    processes.push(coordinator);
    for (let i = 0; i < options.workers; i++) {
      processes.push(
        startService("worker", {
          ...env,
          DATABASE_URL: roleUrl(cluster, ROLES.worker),
          OVERSEER_WORKER_ID: `scale-w${i}`,
        }),
      );
    }
    await waitFor(async () => (await monitor.hlen(`${cluster.prefix}:workers`)) >= options.workers, 60_000);
    const gateway = await GatewayProbe.start(cluster);
    closers.push(() => gateway.close());
    const pid = coordinator.child.pid;
    const measure = (work: () => Promise<void>) => measurePhase(counters, pid, work);

    const one = await measure(() => activateAndFinish(cluster, "one-", options.overheadTasks));
    const oneTimings = await runTimings(cluster, "one-");
    const busyTasks = options.projects * options.tasksPerProject;
    gateway.begin(Array.from({ length: options.projects }, (_, p) => `scale-${p}`));
    const busy = await measure(() => activateAndFinish(cluster, "scale-", busyTasks + options.overheadTasks));
    const gatewayLatencies = await gateway.end();
    const busyTimings = await runTimings(cluster, "scale-");
    await quiet(counters.statements, 3000);
    const idleProjects = options.projects + 1;
    const idle = await measure(() => sleep(options.idleSeconds * 1000));
    const memoryBefore = await redisUsedMemory(monitor);
    const keysBefore = totalBytes(await redisMemoryByKind(monitor));
    await activate(cluster, "long-");
    await waitFor(() => runningRuns(cluster).then((n) => n >= options.longRuns), 300_000);
    const long = await measure(() => sleep(options.windowSeconds * 1000));
    const stillRunning = await runningRuns(cluster);
    const memoryPerRun = ((await redisUsedMemory(monitor)) - memoryBefore) / stillRunning;
    const memoryByKind = await redisMemoryByKind(monitor);
    // What the running runs' keys hold (MEMORY USAGE of every key, after minus before): the job,
    // its lock, its share of the queue's lists and events, its heartbeat entry. `used_memory`
    // also moves with client buffers and the allocator, noisy at small sizes: reported beside.
    const keysPerRun = (totalBytes(memoryByKind) - keysBefore) / stillRunning;

    const slots = options.workers * options.workerConcurrency;
    const floorTasksPerSecond = Math.min(slots, os.cpus().length) / ((2 * floor.perRunMs.p50) / 1000);
    const busyTasksPerSecond = busyTasks > 0 ? busyTasks / busy.seconds : Number.NaN;
    const transitions = busy.statements.notifies;
    const gatewayCommandsPerRequest = await gateway.calibrate(
      counters.commands,
      options.projects > 0 ? "scale-0" : undefined,
      // The background rate right now: the long runs are still running.
      long.commands.all / long.seconds,
    );
    const busyServiceCommands = busy.commands.all - gatewayLatencies.requests * gatewayCommandsPerRequest;
    const idleCommandsPerSecond = idle.commands.all / idle.seconds;
    const longPerRun = (long.commands.all / long.seconds - idleCommandsPerSecond) / options.longRuns;
    const overhead = (oneTimings.queuedToSpawned.p50 + oneTimings.exitedToCommitted.p50) / floor.perRunMs.p50;
    const idleStatementsPerSecond = idle.statements.all / idle.seconds;
    const figures: Figure[] = [
      figure(
        "Postgres statements per applied transition",
        busy.statements.all / transitions,
        "≤ 10",
        (v) => v <= 10,
      ),
      figure(
        "Redis commands per applied transition",
        busyServiceCommands / transitions,
        "≤ 25",
        (v) => v <= 25,
      ),
      figure("statements/s from idle active projects", idleStatementsPerSecond, "≈ 0 (≤ 1/s)", (v) => v <= 1),
      figure("Redis commands/s per running run", longPerRun, "≤ 1", (v) => v <= 1),
      figure("Redis memory bytes per running run (its keys)", keysPerRun, "≤ 1024", (v) => v <= 1024),
      figure("coordinator CPU ms per transition", busy.coordinatorCpuMs / transitions, "reported", null),
      figure(
        "throughput as a share of the git floor",
        busyTasksPerSecond / floorTasksPerSecond,
        "≥ 0.6",
        (v) => v >= 0.6,
      ),
      figure("one project's overhead vs the git floor", overhead, "≤ 1.5", (v) => v <= 1.5),
      figure(
        `gateway fleet p99 ms while ${options.projects} projects run`,
        gatewayLatencies.fleetMs.p99,
        "≤ 50",
        (v) => v <= 50,
      ),
      figure(
        `gateway status p99 ms while ${options.projects} projects run`,
        gatewayLatencies.statusMs.p99,
        "≤ 50",
        (v) => v <= 50,
      ),
    ];
    return {
      sizes: { ...options, slots, idleProjects, sandbox: "bwrap" },
      figures,
      floor: { perRunP50Ms: floor.perRunMs.p50, tasksPerSecond: round(floorTasksPerSecond) },
      one: { ...summary(one, one.statements.notifies), timings: oneTimings },
      busy: {
        ...summary(busy, transitions),
        tasks: busyTasks,
        tasksPerSecond: round(busyTasksPerSecond),
        transitionsPerTask: round(transitions / busyTasks),
        timings: busyTimings,
        gateway: { ...gatewayLatencies, redisCommandsPerRequest: round(gatewayCommandsPerRequest) },
        serviceCommandsPerTransition: round(busyServiceCommands / transitions),
      },
      idle: {
        ...summary(idle, 0),
        statementsPerSecond: round(idleStatementsPerSecond),
        commandsPerSecond: round(idleCommandsPerSecond),
        coordinatorCpuMsPerSecond: round(idle.coordinatorCpuMs / idle.seconds),
      },
      long: {
        ...summary(long, long.statements.notifies),
        runsRunning: { atStart: options.longRuns, atEnd: stillRunning },
        commandsPerSecond: round(long.commands.all / long.seconds),
        commandsPerSecondPerRunAboveIdle: round(longPerRun),
        redisKeyBytesPerRun: round(keysPerRun),
        redisUsedMemoryBytesPerRun: round(memoryPerRun),
        redisMemoryByKind: Object.fromEntries(Object.entries(memoryByKind).slice(0, 15)),
      },
    };
  } finally {
    monitor.disconnect();
    for (const close of closers) await close().catch(() => undefined);
    await Promise.all(processes.map((p) => p.kill("SIGTERM")));
    await cluster.teardown();
    cluster.redis.disconnect();
    await redis.stop();
    await postgres.destroy();
  }
}

/** A figure beside its goal; one this size cannot give (no transition, no request) is null, not judged. */
function figure(name: string, value: number, goal: string, met: ((v: number) => boolean) | null): Figure {
  if (!Number.isFinite(value)) return { figure: name, value: null, goal, met: null };
  return { figure: name, value: round(value), goal, met: met ? met(value) : null };
}

function summary(phase: PhaseCounts, transitions: number) {
  const per = (n: number) => (transitions > 0 ? round(n / transitions) : null);
  return {
    seconds: round(phase.seconds),
    transitions,
    statements: phase.statements.all,
    statementsWithoutTransactionControl: phase.statements.withoutTransactionControl,
    statementsByRole: phase.statements.byRole,
    commands: phase.commands.all,
    coordinatorCpuMs: phase.coordinatorCpuMs,
    perTransition: {
      statements: per(phase.statements.all),
      statementsWithoutTransactionControl: per(phase.statements.withoutTransactionControl),
      commands: per(phase.commands.all),
      coordinatorCpuMs: per(phase.coordinatorCpuMs),
    },
    topStatements: phase.statements.top,
    topCommands: Object.fromEntries(Object.entries(phase.commands.byCommand).slice(0, 15)),
  };
}

/** The projects of every phase, created paused (no service runs yet). */
async function addProjects(cluster: ClusterFixture, options: ScaleOptions): Promise<void> {
  const trivial = ClusterFixture.fakeRunnerConfig({ argv: TRIVIAL_HARNESS, timeout_seconds: 120 });
  const tasks = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: `S00-${String(i + 1).padStart(3, "0")}`,
      title: `Bench task ${i + 1}`,
      scope: ["**"],
    }));
  await cluster.addProject({
    id: "one-0",
    tasks: tasks(options.overheadTasks),
    runnerConfig: trivial,
    start: false,
  });
  for (let p = 0; p < options.projects; p++) {
    await cluster.addProject({
      id: `scale-${p}`,
      tasks: tasks(options.tasksPerProject),
      runnerConfig: trivial,
      start: false,
    });
  }
  const sleeper = ClusterFixture.fakeRunnerConfig({
    argv: ["/bin/sh", "-c", "cat >/dev/null; exec sleep 3600"],
    timeout_seconds: 3600,
  });
  for (let p = 0; p < options.longRuns; p++) {
    await cluster.addProject({ id: `long-${p}`, tasks: tasks(1), runnerConfig: sleeper, start: false });
  }
}

/** The services' environment: the production timings, not the test fixture's short ones. */
function serviceEnv(
  cluster: ClusterFixture,
  options: ScaleOptions,
  defaults: ReturnType<typeof loadSettings>,
): Record<string, string> {
  return cluster.env({
    LOG_LEVEL: "warn",
    OVERSEER_WORKER_CONCURRENCY: String(options.workerConcurrency),
    OVERSEER_HEARTBEAT_INTERVAL_MS: String(defaults.heartbeatIntervalMs),
    OVERSEER_WORKER_LOCK_MS: String(defaults.workerLockMs),
    OVERSEER_WORKER_LOCK_RENEW_MS: String(defaults.workerLockRenewMs),
    OVERSEER_STALLED_INTERVAL_MS: String(defaults.stalledIntervalMs),
    OVERSEER_KILL_GRACE_MS: "500",
    // The sleeping runs are handed back at once when the bench stops the workers.
    OVERSEER_WORKER_DRAIN_MS: "500",
  });
}

function roleUrl(cluster: ClusterFixture, role: string): string {
  const url = new URL(cluster.scratch.url);
  url.username = role;
  return url.toString();
}

async function measurePhase(
  counters: { statements: StatementCounter; commands: CommandCounter },
  pid: number | undefined,
  work: () => Promise<void>,
): Promise<PhaseCounts> {
  await Promise.all([counters.statements.reset(), counters.commands.reset()]);
  const cpu0 = await processCpuMs(pid);
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  const [statements, commands, cpu1] = await Promise.all([
    counters.statements.read(),
    counters.commands.read(),
    processCpuMs(pid),
  ]);
  return { seconds, statements, commands, coordinatorCpuMs: cpu1 - cpu0 };
}

/** Starts the projects whose id starts with `prefix` (as an operator would: a NOTIFY with no origin). */
async function activate(cluster: ClusterFixture, prefix: string): Promise<void> {
  const db = cluster.scratch.db;
  await db
    .updateTable("projects")
    .set({ status: "active", sessions_used: 0 })
    .where("id", "like", `${prefix}%`)
    .execute();
  await sql`SELECT pg_notify(${POSTGRES_NOTIFY_CHANNEL}, id) FROM projects WHERE id LIKE ${`${prefix}%`}`.execute(
    db,
  );
}

/** Starts the projects of `prefix` and waits until `doneTotal` tasks of the cluster are done. */
async function activateAndFinish(cluster: ClusterFixture, prefix: string, doneTotal: number): Promise<void> {
  const db = cluster.scratch.db;
  let wake: () => void = () => {};
  const listener = await cluster.scratch.notifications.listen(POSTGRES_NOTIFY_CHANNEL, () => wake());
  try {
    await activate(cluster, prefix);
    const deadline = Date.now() + 1_800_000;
    for (;;) {
      const { n } = await db
        .selectFrom("tasks")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .where("status", "=", "done")
        .executeTakeFirstOrThrow();
      if (Number(n) >= doneTotal) return;
      if (Date.now() > deadline) throw new Error(`scale bench timed out: ${n} of ${doneTotal} tasks done`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 250).unref();
      });
    }
  } finally {
    await listener.unlisten();
  }
}

/** Waits until no transition was applied for `ms` (the last results and claims settled). */
async function quiet(statements: StatementCounter, ms: number): Promise<void> {
  await statements.reset();
  for (;;) {
    await sleep(ms);
    const { notifies } = await statements.read(0);
    if (notifies === 0) return;
    await statements.reset();
  }
}

function totalBytes(kinds: Record<string, { bytes: number }>): number {
  return Object.values(kinds).reduce((n, k) => n + k.bytes, 0);
}

/** Redis `used_memory` (INFO memory), in bytes. */
async function redisUsedMemory(redis: ReturnType<typeof createRedis>): Promise<number> {
  const info = await redis.info("memory");
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

async function runningRuns(cluster: ClusterFixture): Promise<number> {
  const { n } = await cluster.scratch.db
    .selectFrom("runs")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("status", "=", "running")
    .executeTakeFirstOrThrow();
  return Number(n);
}

interface Timings {
  runs: number;
  queuedToSpawned: Percentiles;
  exitedToCommitted: Percentiles;
  enqueuedToPickedP50: number;
  receivedToCommittedP50: number;
}

async function runTimings(cluster: ClusterFixture, prefix: string): Promise<Timings> {
  const rows = await cluster.scratch.db
    .selectFrom("runs")
    .select(["timing"])
    .where("status", "=", "finished")
    .where("project_id", "like", `${prefix}%`)
    .execute();
  const timings = rows.map((r) => r.timing as Record<string, unknown>);
  const gap = (from: string, to: string) =>
    timings.map((t) => Number(t[to] ?? Number.NaN) - Number(t[from] ?? Number.NaN));
  return {
    runs: rows.length,
    queuedToSpawned: percentiles(gap("enqueuedAt", "spawnedAt")),
    exitedToCommitted: percentiles(gap("exitedAt", "committed")),
    enqueuedToPickedP50: percentiles(gap("enqueuedAt", "pickedAt")).p50,
    receivedToCommittedP50: percentiles(gap("received", "committed")).p50,
  };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`scale bench: condition not met within ${timeoutMs} ms`);
    await sleep(100);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
