/**
 * `npm run bench [-- --quick] [-- --only name,name]`: every benchmark, JSON on stdout and in
 * bench-results/bench-<timestamp>.json, with the conditions (machine, counts, concurrency).
 *
 *   floor        git worktree + commit + push + spawn in a plain shell loop
 *   throughput   the real cluster (coordinator + 2 worker processes, bwrap) at 1, 10, 50 projects
 *   sandbox      spawn overhead per driver vs a plain spawn
 *   gateway      authenticated GET status with autocannon on loopback
 *   decision     HTTP resolve of a decision → next agent process spawned
 *   deadworker   SIGKILL of a worker with runs in flight → each run running again elsewhere
 *   flood        an agent floods its output: worker peak RSS, Redis live log, stored output
 *   tracing      the throughput scenario untraced vs traced (OTEL_* → a local OTLP receiver)
 *   scale        statements and commands per transition, idle cost, per running run, throughput
 *                vs the git floor, on private servers (scale-bench.ts; sizes: --scale-* flags)
 *   forge        pull requests on the GitHub double: forge API calls per task and green → merged
 *                under `merge: auto`, webhook-driven and polling-only (forge-loop-bench.ts)
 *   spawner      CPU per git call from a worker-sized process: forked directly vs through the
 *                process spawner, Node and Perl (git-spawner-bench.ts; --spawner-rss-mb, default 130)
 *   images       a run on a project image: first pull + unpack, cache hit, bwrap on the image
 *                rootfs vs on the host root, docker run where an engine answers (image-run-bench.ts)
 *
 * The throughput, tracing and scale benches run the coordinator, workers and gateway from the
 * production build (scripts/build.mjs, built once into a scratch dir), as operators do;
 * `--tsx` runs their TypeScript through tsx instead (bench-services.ts), `conditions.services`
 * in their JSON says which.
 */
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createSandboxDriver, measureSpawnOverhead } from "@overseer/sandbox";
import { REPO_ROOT } from "../support/service-process.ts";
import { type ServicesMode, servicesCondition } from "./bench-services.ts";
import { benchThroughput } from "./cluster-throughput-bench.ts";
import { benchDeadWorker } from "./dead-worker-bench.ts";
import { benchDecisionLatency } from "./decision-latency-bench.ts";
import { runFloodBench } from "./flood-memory-bench.ts";
import { benchForgeLoop } from "./forge-loop-bench.ts";
import { runGatewayStatusBench } from "./gateway-bench.ts";
import { benchGitFloor } from "./git-floor-bench.ts";
import { benchGitSpawner } from "./git-spawner-bench.ts";
import { benchImageRuns } from "./image-run-bench.ts";
import { benchScale, SCALE_DEFAULTS } from "./scale-bench.ts";
import { ScalePhaseError } from "./scale-progress.ts";
import type { ScaleOptions } from "./scale-types.ts";
import { benchTracingOverhead } from "./tracing-overhead-bench.ts";

/** `--scale-projects 1000` etc.: the scale bench's sizes (scale-bench.ts), its defaults when absent. */
const SCALE_FLAGS: Record<
  string,
  Exclude<keyof ScaleOptions, "services" | "workerCpuProfDir" | "coordinatorCpuProfDir" | "gatewayCpuProfDir">
> = {
  "scale-projects": "projects",
  "scale-tasks": "tasksPerProject",
  "scale-overhead-tasks": "overheadTasks",
  "scale-warmup-tasks": "warmupTasks",
  "scale-idle-seconds": "idleSeconds",
  "scale-long-runs": "longRuns",
  "scale-window-seconds": "windowSeconds",
  "scale-workers": "workers",
  "scale-worker-concurrency": "workerConcurrency",
  "scale-floor-iterations": "floorIterations",
  "scale-phase-timeout-seconds": "phaseTimeoutSeconds",
  "scale-stall-seconds": "stallSeconds",
  "scale-probe-rate": "probeRate",
};

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    // The services through tsx instead of the production build (bench-services.ts).
    tsx: { type: "boolean", default: false },
    // The spawner bench's resident size before it measures, in MB (a worker's is ~130).
    "spawner-rss-mb": { type: "string", default: "130" },
    // A dir for the scale bench's worker CPU profiles (node --cpu-prof), e.g. /tmp/prof.
    "scale-worker-cpu-prof": { type: "string" },
    // The same for the coordinator.
    "scale-coordinator-cpu-prof": { type: "string" },
    // The same for the probe's gateway.
    "scale-gateway-cpu-prof": { type: "string" },
    ...Object.fromEntries(Object.keys(SCALE_FLAGS).map((flag) => [flag, { type: "string" as const }])),
  },
});
const only = values.only ? new Set(values.only.split(",")) : null;
const want = (name: string) => only === null || only.has(name);
const quick = values.quick ?? false;
const services: ServicesMode = values.tsx ? "tsx" : "build";
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

const results: Record<string, unknown> = {
  conditions: {
    at: new Date().toISOString(),
    host: os.hostname(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
    node: process.version,
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
    quick,
    services: servicesCondition(services),
  },
};

if (want("floor")) {
  log("floor: plain shell loop");
  results.floor = await benchGitFloor(quick ? 20 : 50);
}

if (want("spawner")) {
  log("spawner: CPU per git call, forked directly vs through the process spawner");
  results.spawner = await benchGitSpawner({
    calls: quick ? 100 : 400,
    rssMb: Number(values["spawner-rss-mb"]),
  });
}

if (want("throughput")) {
  const scenarios = quick
    ? [
        { projects: 1, tasksPerProject: 4 },
        { projects: 10, tasksPerProject: 1 },
      ]
    : [
        { projects: 1, tasksPerProject: 10 },
        { projects: 10, tasksPerProject: 3 },
        { projects: 50, tasksPerProject: 2 },
      ];
  const runs = [];
  for (const s of scenarios) {
    log(`throughput: ${s.projects} project(s) × ${s.tasksPerProject} task(s)`);
    runs.push(await benchThroughput({ ...s, workers: 2, workerConcurrency: 2, sandbox: "bwrap", services }));
  }
  results.throughput = runs;
  const floor = results.floor as { perRunMs: { p50: number; p99: number } } | undefined;
  if (floor) {
    // Each task is two agent runs (execute, review); the floor does one run's git + spawn
    // work on one core, so the machine allows at most min(slots, cores) of them at once.
    const parallel = Math.min(4, os.cpus().length);
    const floorTasksPerSecond = parallel / ((2 * floor.perRunMs.p50) / 1000);
    const widest = runs.at(-1);
    results.comparison = {
      floorRunP50Ms: floor.perRunMs.p50,
      overheadP50VsFloor: runs.map((r) => ({
        projects: r.projects,
        queuedToSpawnedP50: r.queuedToSpawnedMs.p50,
        exitedToCommittedP50: r.exitedToCommittedMs.p50,
        ratio:
          Math.round(((r.queuedToSpawnedMs.p50 + r.exitedToCommittedMs.p50) / floor.perRunMs.p50) * 100) /
          100,
      })),
      floorTasksPerSecond: Math.round(floorTasksPerSecond * 100) / 100,
      widestScenarioShareOfFloor: widest
        ? Math.round((widest.tasksPerSecond / floorTasksPerSecond) * 1000) / 1000
        : null,
    };
  }
}

if (want("sandbox")) {
  log("sandbox: spawn overhead");
  const drivers = [];
  for (const name of ["bwrap", "none"] as const) {
    const driver = createSandboxDriver(name, { allowUnsafeNone: true });
    try {
      drivers.push(await measureSpawnOverhead({ driver, iterations: quick ? 30 : 100 }));
    } finally {
      await driver.dispose();
    }
  }
  results.sandbox = drivers;
}

if (want("gateway")) {
  log("gateway: GET status under load");
  results.gateway = await runGatewayStatusBench({
    durationSeconds: quick ? 5 : 10,
    connections: 50,
    tasks: 200,
  });
}

if (want("decision")) {
  log("decision: resolve → next run spawned");
  results.decision = await benchDecisionLatency(quick ? 5 : 15);
}

if (want("deadworker")) {
  log("deadworker: SIGKILL a worker with runs in flight → running again on another worker");
  results.deadWorker = await benchDeadWorker(quick ? 4 : 8);
}

if (want("flood")) {
  log("flood: an agent floods its output; worker peak RSS, Redis live log and stored output");
  results.flood = await runFloodBench(quick ? 64 : 512);
}

if (want("tracing")) {
  log("tracing: the same runs untraced, then traced (OTLP/HTTP to a local receiver)");
  results.tracing = await benchTracingOverhead(quick ? 3 : 8, services);
}

if (want("scale")) {
  const sizes: ScaleOptions = {
    ...SCALE_DEFAULTS,
    services,
    workerCpuProfDir: values["scale-worker-cpu-prof"] ? path.resolve(values["scale-worker-cpu-prof"]) : "",
    coordinatorCpuProfDir: values["scale-coordinator-cpu-prof"]
      ? path.resolve(values["scale-coordinator-cpu-prof"])
      : "",
    gatewayCpuProfDir: values["scale-gateway-cpu-prof"] ? path.resolve(values["scale-gateway-cpu-prof"]) : "",
  };
  for (const [flag, key] of Object.entries(SCALE_FLAGS)) {
    const given = (values as Record<string, unknown>)[flag];
    if (given === undefined) continue;
    const n = Number(given);
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`--${flag} ${String(given)}: expected a whole number ≥ 0`);
    sizes[key] = n;
  }
  log(`scale: ${sizes.projects} project(s) × ${sizes.tasksPerProject} task(s), ${sizes.longRuns} long runs`);
  try {
    results.scale = await benchScale(sizes);
  } catch (error) {
    // A phase that could not finish says which, how far it got and why (scale-progress.ts).
    if (!(error instanceof ScalePhaseError)) throw error;
    log(error.message);
    process.exit(1);
  }
  for (const f of (
    results.scale as { figures: { figure: string; value: number; goal: string; met: boolean | null }[] }
  ).figures) {
    log(
      `scale: ${f.figure}: ${f.value} (goal ${f.goal}${f.met === null ? "" : f.met ? ", met" : ", NOT met"})`,
    );
  }
}

if (want("forge")) {
  log("forge: pull requests on the GitHub double, webhook-driven then polling-only, merge: auto");
  const forge = await benchForgeLoop(quick ? 2 : 5);
  results.forge = forge;
  for (const m of forge.modes) {
    log(
      `forge: ${m.mode}: green → merged p50 ${m.greenToMergedMs.p50} ms (max ${m.greenToMergedMs.max}), API calls per task p50 ${m.apiCallsPerTask.p50} (max ${m.apiCallsPerTask.max}), forge requests per task ${m.forgeRequestsPerTask} (${Math.round(m.notModifiedShare * 100)}% 304)`,
    );
  }
}

if (want("images")) {
  log(
    "images: first pull + unpack, cache hit, bwrap and gVisor on the image rootfs vs the host root, docker run",
  );
  const images = await benchImageRuns(quick ? 20 : 60);
  results.images = images;
  const extra = images.cacheHitRunExtraVsPlainBwrapMs as { value: number; goal: string } | undefined;
  log(
    images.skipped
      ? `images: skipped: ${String(images.skipped)}`
      : `images: first pull ${String(images.firstPullAndUnpackMs)} ms; cache-hit run +${extra?.value} ms vs plain bwrap (goal ${extra?.goal})`,
  );
  const gvisor = images.gvisor as { skipped?: string; startExtraVsPlainBwrapMs?: number } | undefined;
  if (gvisor !== undefined)
    log(
      gvisor.skipped
        ? `images: gVisor skipped: ${gvisor.skipped}`
        : `images: gVisor start on the image +${gvisor.startExtraVsPlainBwrapMs} ms vs plain bwrap`,
    );
}

const json = JSON.stringify(results, null, 2);
process.stdout.write(`${json}\n`);
const dir = path.join(REPO_ROOT, "bench-results");
await mkdir(dir, { recursive: true });
const file = path.join(dir, `bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
await writeFile(file, `${json}\n`);
log(`written to ${path.relative(REPO_ROOT, file)}`);
process.exit(0);
