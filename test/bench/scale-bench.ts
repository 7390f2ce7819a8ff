/**
 * `npm run bench -- --only scale`: what the cluster costs per unit of change (issue 22), on a
 * private Postgres with `pg_stat_statements` and a private Redis, so that statements and
 * commands are counted exactly. The real coordinator, worker and gateway processes run from the
 * production build (scripts/build.mjs, built once into a scratch dir: `node <dir>/worker.js`,
 * what operators run; `--tsx` runs the TypeScript through tsx instead, bench-services.ts), each
 * in a session of its own as `overseer up` starts them (so, where the kernel groups sessions for
 * scheduling, each its own group, and the workers at their `OVERSEER_WORKER_NICE`), with the bwrap
 * sandbox and the production lease, reconcile and lock settings, four phases in one cluster:
 *
 *   warm   `warmupTasks` trivial tasks over projects of their own (5 each), not measured: the
 *          services' JIT compiles their hot paths, as in a cluster that has been running a while
 *          (a fresh coordinator spent a fifth of its CPU compiling, and ran mostly unoptimised
 *          code, through its first ~600 transitions); `--scale-warmup-tasks 0` measures a cold
 *          cluster. Its projects are paused once done, so the idle phases do not count them.
 *   one    1 project × `overheadTasks` tasks, one at a time: its overhead vs the git floor
 *   busy   `projects` projects × `tasksPerProject` trivial tasks at once: statements and
 *          commands per applied transition, coordinator CPU per transition, throughput vs floor
 *   idle   every project active with nothing to do, for `idleSeconds`: statements/s, commands/s,
 *          coordinator CPU ms/s; then again with a tenth of them active (the rest paused), so
 *          that the JSON shows whether idle cost grows with idle projects (`idle.bySize`)
 *   long   `longRuns` runs that sleep, all running, for `windowSeconds`: Redis commands/s per
 *          running run (above the idle rate), Redis memory per running run (`used_memory` with
 *          them running minus before they started), coordinator CPU ms/s beside idle's
 *
 * The git floor (git-floor-bench.ts) is measured before the phases and again after the idle ones
 * (the cluster quiet for their length); the ratios divide by the p50 of both runs' iterations
 * together, as the machine's speed drifts between runs (`floor.beforeP50Ms`, `floor.afterP50Ms`).
 *
 * A transition is one commit that wrote something: each sends exactly one NOTIFY, counted from
 * pg_stat_statements. Counts are exact; times depend on the machine's load. Postgres' own account
 * of the services' statements per transition comes from there too (`perTransition`: how many
 * were planned rather than run on a prepared statement's plan, their execution and planning ms,
 * WAL bytes; `topStatementsByTime`), and `postgresSessionsOpened` counts the connections opened
 * in the phase (each a backend forked and its statements prepared again).
 *
 * Where a run's time goes, for the one and busy phases: each run phase's percentiles from the
 * stored timelines (`timings.phasesMs`, run-phases.ts), and the workers' CPU per finished run,
 * their own beside their reaped children's (git, bwrap, the harness), from /proc
 * (`workerCpuMsPerRun`: `own` includes the workers' background work during the phase,
 * `ownAboveIdle` takes out their rate in the idle phase, `idle.workerCpuMsPerSecond`).
 * `--scale-worker-cpu-prof DIR` runs each worker under `node --cpu-prof` (its profile in DIR
 * when it exits at the bench's end): where a worker's own CPU goes; `--scale-coordinator-cpu-prof
 * DIR` does the same for the coordinator, `--scale-gateway-cpu-prof DIR` for the gateway
 * (scripts/cpuprofile-summary.mjs sums a profile by module and function).
 *
 * Every wait is bounded (scale-progress.ts): a phase fails at once, saying how far it got and
 * each paused project's reason, when its bound passes (`--scale-phase-timeout-seconds`, default
 * scaled with the phase's size), when nothing progressed for `--scale-stall-seconds` (default
 * 60 s + 0.1 s per project), when one of its projects pauses, or when a service exits.
 *
 * The busy phase also times a real gateway process answering the fleet and one project's
 * status while the projects run, open loop at `--scale-probe-rate` requests a second per route
 * (scale-gateway-probe.ts), from a client in a process of its own; the JSON names the slowest
 * requests and the gateway's own event-loop delay over the phase. Projects are made from one template repository and started or paused
 * through the product's transitions, several at a time (scale-setup.ts).
 *
 * Sizes (flags of bench-main.ts): the defaults finish in a few minutes on 2 cores. The issue's
 * sizes, one command each:
 *
 *   1,000 projects × 2 tasks, and the gateway's p99 while they run:
 *     npm run bench -- --only scale --scale-projects 1000 --scale-workers 2 --scale-worker-concurrency 16
 *   5,000 idle active projects (statements/s and coordinator CPU while nothing changes, at 501 and 5,001):
 *     npm run bench -- --only scale --scale-projects 5000 --scale-tasks 0 --scale-long-runs 0
 *   500 concurrent long runs (Redis commands/s and memory per running run):
 *     npm run bench -- --only scale --scale-projects 0 --scale-long-runs 500 --scale-workers 4 --scale-worker-concurrency 128
 *
 * A size with no busy transitions (`--scale-tasks 0`, `--scale-projects 0`) prints its
 * per-transition figures as null.
 */
import { sql } from "@overseer/db";
import { createRedis, type Redis } from "@overseer/queue";
import { detectSandboxHost } from "@overseer/sandbox";
import { loadSettings } from "@overseer/settings";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { startPrivatePostgres } from "../support/private-postgres.ts";
import { startPrivateRedis } from "../support/private-redis.ts";
import { type ServiceProcess, type StartServiceOptions, startService } from "../support/service-process.ts";
import { benchServices, servicesCondition } from "./bench-services.ts";
import { benchGitFloor } from "./git-floor-bench.ts";
import { WorkerAccounting } from "./scale-accounting.ts";
import {
  CommandCounter,
  measurePhase,
  type PhaseCounts,
  redisMemoryByKind,
  redisUsedMemory,
  runTimings,
  StatementCounter,
  totalBytes,
} from "./scale-counters.ts";
import { clusterCpuParts } from "./scale-cpu.ts";
import { GatewayProbe } from "./scale-gateway-probe.ts";
import {
  boundMs,
  PROGRESS_MIN_INTERVAL_MS,
  ScalePhaseError,
  ScaleProgress,
  sleep,
} from "./scale-progress.ts";
import { report } from "./scale-report.ts";
import {
  addProjects,
  pauseProjects,
  projectIds,
  roleUrl,
  serviceEnv,
  startProjects,
  WARMUP_TASKS_PER_PROJECT,
  warmupProjects,
} from "./scale-setup.ts";
import type { Measured, Rig, ScaleOptions } from "./scale-types.ts";

export const SCALE_DEFAULTS: ScaleOptions = Object.freeze({
  projects: 20,
  tasksPerProject: 2,
  overheadTasks: 5,
  warmupTasks: 100,
  idleSeconds: 15,
  longRuns: 8,
  windowSeconds: 10,
  workers: 2,
  workerConcurrency: 4,
  floorIterations: 30,
  phaseTimeoutSeconds: 0,
  stallSeconds: 0,
  probeRate: 10,
  services: "build",
  workerCpuProfDir: "",
  coordinatorCpuProfDir: "",
  gatewayCpuProfDir: "",
});

const ROLES = { coordinator: "bench_coordinator", worker: "bench_worker" } as const;

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

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
      // Planning time per statement beside execution time (perTransition.statementPlanMs).
      "pg_stat_statements.track_planning": "on",
      // The bench's thousands of projects and the services' pools.
      max_connections: "300",
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
  const monitor = createRedis(redis.url);
  const accounting = WorkerAccounting.create();
  let gateway: GatewayProbe | null = null;
  try {
    const statements = new StatementCounter(cluster.scratch.db, Object.values(ROLES));
    await statements.install();
    await addProjects(cluster, options, log);
    // Each service in a session of its own, as `overseer up` and containers run them (autogroup).
    const services = { ...(await benchServices(options.services)), session: true };
    const { coordinatorPid, workerPids } = startServices(cluster, options, defaults, processes, {
      ...services,
      onWorker: (pid) => accounting?.join(pid),
    });
    const broken = watchServices(processes);
    const progress = new ScaleProgress(cluster.scratch.db, cluster.scratch.notifications, log);
    await waitForWorkers(monitor, cluster.prefix, options, broken);
    // On a loaded machine the gateway's start (tsx) took over 30 s beside 5,000 projects.
    const gatewayStartMs = boundMs(options.phaseTimeoutSeconds, 60, 0.02, options.projects);
    const gatewayStart = options.gatewayCpuProfDir
      ? { ...services, nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${options.gatewayCpuProfDir}`] }
      : services;
    gateway = await GatewayProbe.start(cluster, "one-0", gatewayStartMs, gatewayStart);
    const counters = { statements, commands: new CommandCounter(monitor) };
    const [backend] = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
      .execute(cluster.scratch.db)
      .then((r) => r.rows);
    const cpuParts = await clusterCpuParts(backend?.pid ?? 0, await monitor.info("server"), {
      coordinatorPid,
      workerPids,
      gatewayPid: gateway.pid,
      probeClientPid: gateway.clientPid,
      workersTreeMs: accounting && (() => accounting.usageMs()),
    });
    const rig: Rig = {
      cluster,
      counters,
      monitor,
      coordinatorPid,
      workerPids,
      cpuParts,
      gateway,
      progress,
      broken,
    };
    const measured = await runPhases(rig, options);
    const sandboxHost = await detectSandboxHost();
    return {
      ...(await report(rig, options, floor, measured)),
      conditions: {
        services: servicesCondition(options.services),
        sandbox: "bwrap",
        sandboxHost: sandboxHost.summary,
        limitsEnforced: sandboxHost.cgroups.controllers,
        // Not set: the workers here enforce per-run pids and memory limits in their own cgroups.
        allowUnenforcedLimits: false,
        probe: `open loop, ${options.probeRate} fleet + ${options.probeRate} status requests/s, from a client process at niceness ${gateway.clientNice}`,
        progressReadsAtMostEveryMs: PROGRESS_MIN_INTERVAL_MS,
      },
    };
  } finally {
    monitor.disconnect();
    await gateway?.close().catch(() => undefined);
    await Promise.all(processes.map((p) => p.kill("SIGTERM")));
    await accounting?.remove();
    await cluster.teardown();
    cluster.redis.disconnect();
    await redis.stop();
    await postgres.destroy();
  }
}

/** Starts the coordinator and the workers as processes (their own database roles); returns their pids. */
function startServices(
  cluster: ClusterFixture,
  options: ScaleOptions,
  defaults: ReturnType<typeof loadSettings>,
  processes: ServiceProcess[],
  services: StartServiceOptions & { onWorker(pid: number | undefined): void },
): { coordinatorPid: number | undefined; workerPids: (number | undefined)[] } {
  const env = serviceEnv(cluster, options, defaults);
  const profiled = (dir: string) =>
    dir ? { ...services, nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`] } : services;
  const coordinator = startService(
    "coordinator",
    { ...env, DATABASE_URL: roleUrl(cluster, ROLES.coordinator) },
    profiled(options.coordinatorCpuProfDir),
  );
  processes.push(coordinator);
  const workerPids: (number | undefined)[] = [];
  const workerStart = profiled(options.workerCpuProfDir);
  for (let i = 0; i < options.workers; i++) {
    const worker = startService(
      "worker",
      { ...env, DATABASE_URL: roleUrl(cluster, ROLES.worker), OVERSEER_WORKER_ID: `scale-w${i}` },
      workerStart,
    );
    services.onWorker(worker.child.pid);
    processes.push(worker);
    workerPids.push(worker.child.pid);
  }
  return { coordinatorPid: coordinator.child.pid, workerPids };
}

/** A service that exits before the bench stops it breaks every phase: said with its last output. */
function watchServices(processes: readonly ServiceProcess[]): () => string | null {
  let gone: string | null = null;
  processes.forEach((p, i) => {
    void p.exited.then((code) => {
      const tail = p.output().trim().split("\n").slice(-5).join("\n    ");
      gone ??= `${p.name} ${i === 0 ? "" : `#${i} `}exited (${String(code)}):\n    ${tail}`;
    });
  });
  return () => gone;
}

async function waitForWorkers(
  monitor: Redis,
  prefix: string,
  options: ScaleOptions,
  broken: () => string | null,
): Promise<void> {
  // Each worker loads (through tsx it took longer) and probes its sandbox (bwrap, cgroups, runsc)
  // first: over a minute for 4 of them on a machine at load 25.
  const deadline = Date.now() + boundMs(options.phaseTimeoutSeconds, 120, 15, options.workers);
  for (;;) {
    const registered = await monitor.hlen(`${prefix}:workers`);
    if (registered >= options.workers) return;
    const why = broken() ?? (Date.now() > deadline ? "its bound passed" : null);
    if (why !== null)
      throw new ScalePhaseError(
        `scale bench: phase "workers start" failed: ${why}\n  how far: ${registered} of ${options.workers} workers registered`,
      );
    await sleep(200);
  }
}

/**
 * The warm phase: `warmupTasks` tasks over `warm-<n>` projects, waited for, then those projects
 * paused and the cluster quiet. Returns the tasks done.
 */
async function warmUp(
  rig: Rig,
  options: ScaleOptions,
  done: (phase: string, prefix: string, total: number, bound: number, projects: number) => Promise<unknown>,
): Promise<number> {
  const projects = warmupProjects(options.warmupTasks);
  if (projects === 0) return 0;
  const ids = projectIds("warm-", projects);
  const tasks = projects * WARMUP_TASKS_PER_PROJECT;
  log(`scale warm: ${projects} projects × ${WARMUP_TASKS_PER_PROJECT} tasks (not measured)`);
  await startProjects(rig.cluster, ids);
  await done("warm", "warm-", tasks, boundMs(options.phaseTimeoutSeconds, 120, 1, tasks), projects);
  await pauseProjects(rig.cluster, ids);
  await quiet(rig, options);
  return tasks;
}

async function runPhases(rig: Rig, options: ScaleOptions): Promise<Measured> {
  const { cluster, counters, progress } = rig;
  const measure = (work: () => Promise<void>) => measurePhase(counters, rig, work);
  const stallMs = (projects: number) =>
    (options.stallSeconds > 0 ? options.stallSeconds : 60 + 0.1 * projects) * 1000;
  const done = (phase: string, prefix: string, total: number, bound: number, projects: number) =>
    progress.waitFor({
      phase,
      prefix,
      until: (p) => p.tasksDone >= total,
      describe: (p) => `${p.tasksDone} of ${total} tasks done (${p.runsEnded} runs ended)`,
      progressOf: (p) => p.runsEnded,
      boundMs: bound,
      stallMs: stallMs(projects),
      broken: rig.broken,
    });

  // Tasks done so far, every project's: what each phase waits for counts on from it.
  const warmed = await warmUp(rig, options, done);
  log(`scale one: 1 project × ${options.overheadTasks} tasks`);
  const one = await measure(async () => {
    await startProjects(cluster, ["one-0"]);
    await done(
      "one",
      "one-",
      warmed + options.overheadTasks,
      boundMs(options.phaseTimeoutSeconds, 60, 20, options.overheadTasks),
      1,
    );
  });
  const oneTimings = await runTimings(cluster, "one-");
  const busyTasks = options.projects * options.tasksPerProject;
  const scaleIds = projectIds("scale-", options.projects);
  log(`scale busy: ${options.projects} projects × ${options.tasksPerProject} tasks`);
  await rig.gateway.begin(scaleIds, options.probeRate);
  const busy = await measure(async () => {
    await startProjects(cluster, scaleIds);
    const bound = boundMs(options.phaseTimeoutSeconds, 120, 1, busyTasks + 0.05 * options.projects);
    await done("busy", "scale-", warmed + busyTasks + options.overheadTasks, bound, options.projects);
  });
  const gatewayLatencies = await rig.gateway.end();
  const busyTimings = await runTimings(cluster, "scale-");
  await quiet(rig, options);
  log(`scale idle: ${options.projects + 1} active projects for ${options.idleSeconds} s`);
  const idle = await measure(() => sleep(options.idleSeconds * 1000));
  let idleSmall: Measured["idleSmall"] = null;
  if (options.projects >= 10) {
    const small = Math.ceil(options.projects / 10);
    await pauseProjects(cluster, scaleIds.slice(small));
    await quiet(rig, options);
    log(`scale idle: ${small + 1} active projects for ${options.idleSeconds} s`);
    idleSmall = { projects: small + 1, counts: await measure(() => sleep(options.idleSeconds * 1000)) };
  }
  // The floor again once the cluster has idled (the busy phase's cleanup, its sandboxes' network
  // namespaces and Postgres' writes, behind it): pooled with the first.
  const floorAfter = await benchGitFloor(options.floorIterations);
  return {
    one,
    oneTimings,
    busy,
    busyTimings,
    gatewayLatencies,
    floorAfter,
    idle,
    idleSmall,
    ...(await longPhase(rig, options, measure, stallMs)),
  };
}

async function longPhase(
  rig: Rig,
  options: ScaleOptions,
  measure: (work: () => Promise<void>) => Promise<PhaseCounts>,
  stallMs: (projects: number) => number,
) {
  const { cluster, monitor } = rig;
  const memoryBefore = await redisUsedMemory(monitor);
  const keysBefore = totalBytes(await redisMemoryByKind(monitor));
  log(`scale long: ${options.longRuns} runs that sleep`);
  await startProjects(cluster, projectIds("long-", options.longRuns));
  await rig.progress.waitFor({
    phase: "long runs start",
    prefix: "long-",
    until: (p) => p.runsRunning >= options.longRuns,
    describe: (p) => `${p.runsRunning} of ${options.longRuns} runs running`,
    progressOf: (p) => p.runsRunning,
    boundMs: boundMs(options.phaseTimeoutSeconds, 60, 0.5, options.longRuns),
    stallMs: stallMs(options.longRuns),
    broken: rig.broken,
  });
  const long = await measure(() => sleep(options.windowSeconds * 1000));
  const stillRunning = (await rig.progress.read("long-")).runsRunning;
  const memoryPerRun = ((await redisUsedMemory(monitor)) - memoryBefore) / stillRunning;
  const memoryByKind = await redisMemoryByKind(monitor);
  // What the running runs' keys hold (MEMORY USAGE of every key, after minus before): the job,
  // its lock, its share of the queue's lists and events, its heartbeat entry. `used_memory`
  // also moves with client buffers and the allocator, noisy at small sizes: reported beside.
  const keysPerRun = (totalBytes(memoryByKind) - keysBefore) / stillRunning;
  return { long, stillRunning, memoryPerRun, memoryByKind, keysPerRun };
}

/**
 * Waits until no transition was applied for 3 s (the last results and claims settled), within
 * the phase bound (60 s + 0.05 s per project).
 */
/**
 * Waits until no transition was written for 3 s, then (before an idle phase) until the services'
 * statements of the last 3 s are near the idle rate (≤ 6, 2/s): projects just activated each
 * get a pass once their lease is gained, in bounded batches, and at thousands of projects those
 * passes run on for seconds after the last transition; they are the activation's cost, not the
 * idle projects'. A cluster that never gets that quiet is measured anyway once the bound passes.
 */
async function quiet(rig: Rig, options: ScaleOptions): Promise<void> {
  const { statements } = rig.counters;
  const deadline = Date.now() + boundMs(options.phaseTimeoutSeconds, 60, 0.05, options.projects);
  await statements.reset();
  for (;;) {
    await sleep(3000);
    const { notifies, all } = await statements.read(0);
    if (notifies === 0 && (all <= 6 || Date.now() > deadline)) return;
    const why = rig.broken() ?? (notifies > 0 && Date.now() > deadline ? "its bound passed" : null);
    if (why !== null)
      throw new ScalePhaseError(
        `scale bench: phase "quiet" failed: ${why}\n  how far: still ${notifies} transitions in the last 3 s`,
      );
    await statements.reset();
  }
}
