/**
 * The scale bench's report (scale-bench.ts): every figure beside its goal, as the issue names
 * them, and the JSON of each phase (counts per transition, timings, where a task's CPU goes).
 */
import os from "node:os";
import { type FloorResult, pooledFloor } from "./git-floor-bench.ts";
import { type PhaseCounts, phaseSummary, workerCpuPerRun } from "./scale-counters.ts";
import { cpuPer } from "./scale-cpu.ts";
import type { Measured, Rig, ScaleOptions } from "./scale-types.ts";

interface Figure {
  figure: string;
  value: number | null;
  goal: string;
  met: boolean | null;
}

export async function report(
  rig: Rig,
  options: ScaleOptions,
  floorBefore: FloorResult,
  m: Measured,
): Promise<Record<string, unknown>> {
  const { one, busy, idle, long, gatewayLatencies } = m;
  const slots = options.workers * options.workerConcurrency;
  // Both measurements' iterations: the machine's speed drifts between runs minutes apart (a
  // floor of 35 and 49 ms on the same idle machine), and the ratios divide by it.
  const floor = pooledFloor(floorBefore, m.floorAfter);
  const floorTasksPerSecond = Math.min(slots, os.cpus().length) / ((2 * floor.perRunMs.p50) / 1000);
  const busyTasks = options.projects * options.tasksPerProject;
  const busyTasksPerSecond = busyTasks > 0 ? busyTasks / busy.seconds : Number.NaN;
  const transitions = busy.statements.notifies;
  const gatewayCommandsPerRequest = await rig.gateway.calibrate(
    rig.counters.commands,
    options.projects > 0 ? "scale-0" : undefined,
    // The background rate right now: the long runs are still running.
    long.commands.all / long.seconds,
  );
  const busyServiceCommands = busy.commands.all - gatewayLatencies.requests * gatewayCommandsPerRequest;
  const idleCommandsPerSecond = idle.commands.all / idle.seconds;
  const longPerRun = (long.commands.all / long.seconds - idleCommandsPerSecond) / options.longRuns;
  const overhead =
    (m.oneTimings.queuedToSpawned.p50 + m.oneTimings.exitedToCommitted.p50) / floor.perRunMs.p50;
  const idleStatementsPerSecond = idle.statements.all / idle.seconds;
  const cpuPerSecond = (c: PhaseCounts) => c.coordinatorCpuMs / c.seconds;
  const idleProjects = options.projects + 1;
  // Extrapolated from at least 100 more projects only: from fewer it scales the noise (−1,259
  // ms/s from 3 → 21); idle.bySize gives the rates themselves at every size.
  const grown = m.idleSmall ? idleProjects - m.idleSmall.projects : 0;
  const idleGrowth =
    m.idleSmall && grown >= 100
      ? ((cpuPerSecond(idle) - cpuPerSecond(m.idleSmall.counts)) / grown) * 1000
      : Number.NaN;
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
    figure("Redis memory bytes per running run (its keys)", m.keysPerRun, "≤ 1024", (v) => v <= 1024),
    figure("coordinator CPU ms per transition", busy.coordinatorCpuMs / transitions, "reported", null),
    figure(
      `coordinator idle CPU ms/s added per 1,000 active projects (${m.idleSmall?.projects ?? "-"} → ${idleProjects})`,
      idleGrowth,
      "≈ 0 (flat)",
      null,
    ),
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
  const idleAt = (projects: number, c: PhaseCounts) => ({
    activeProjects: projects,
    seconds: round(c.seconds),
    coordinatorCpuMsPerSecond: round(cpuPerSecond(c)),
    statementsPerSecond: round(c.statements.all / c.seconds),
    commandsPerSecond: round(c.commands.all / c.seconds),
  });
  return {
    sizes: { ...options, slots, idleProjects },
    figures,
    floor: {
      perRunP50Ms: floor.perRunMs.p50,
      tasksPerSecond: round(floorTasksPerSecond),
      beforeP50Ms: floorBefore.perRunMs.p50,
      afterP50Ms: m.floorAfter.perRunMs.p50,
    },
    one: {
      ...phaseSummary(one, one.statements.notifies),
      timings: m.oneTimings,
      workerCpuMsPerRun: workerCpuPerRun(one, m.oneTimings.runs, idle),
      cpuMsPerTask: one.cpu && cpuPer(one.cpu, options.overheadTasks),
    },
    busy: {
      ...phaseSummary(busy, transitions),
      tasks: busyTasks,
      tasksPerSecond: round(busyTasksPerSecond),
      transitionsPerTask: round(transitions / busyTasks),
      timings: m.busyTimings,
      workerCpuMsPerRun: workerCpuPerRun(busy, m.busyTimings.runs, idle),
      // Where a task's CPU goes, the whole machine's included (the goal's floor is ~2 × its p50).
      cpuMsPerTask: busy.cpu && cpuPer(busy.cpu, busyTasks),
      // Postgres' CPU (every backend's: the gateway's and the bench's reads included) per
      // applied transition, beside perTransition's statement times, which Postgres counts itself.
      postgresCpuMsPerTransition:
        busy.cpu && transitions > 0 ? round((busy.cpu.parts.postgres ?? Number.NaN) / transitions) : null,
      gateway: { ...gatewayLatencies, redisCommandsPerRequest: round(gatewayCommandsPerRequest) },
      serviceCommandsPerTransition: round(busyServiceCommands / transitions),
    },
    idle: {
      ...phaseSummary(idle, 0),
      statementsPerSecond: round(idleStatementsPerSecond),
      commandsPerSecond: round(idleCommandsPerSecond),
      coordinatorCpuMsPerSecond: round(cpuPerSecond(idle)),
      // The workers together, waiting for jobs (heartbeats, BullMQ's blocking fetches).
      workerCpuMsPerSecond: round(idle.workerCpuMs.own / idle.seconds),
      bySize: [
        ...(m.idleSmall ? [idleAt(m.idleSmall.projects, m.idleSmall.counts)] : []),
        idleAt(idleProjects, idle),
      ],
    },
    long: {
      ...phaseSummary(long, long.statements.notifies),
      runsRunning: { atStart: options.longRuns, atEnd: m.stillRunning },
      commandsPerSecond: round(long.commands.all / long.seconds),
      commandsPerSecondPerRunAboveIdle: round(longPerRun),
      // Beside idle's: flat when the running runs cost the coordinator nothing.
      coordinatorCpuMsPerSecond: round(cpuPerSecond(long)),
      redisKeyBytesPerRun: round(m.keysPerRun),
      redisUsedMemoryBytesPerRun: round(m.memoryPerRun),
      redisMemoryByKind: Object.fromEntries(Object.entries(m.memoryByKind).slice(0, 15)),
    },
  };
}

/** A figure beside its goal; one this size cannot give (no transition, no request) is null, not judged. */
function figure(name: string, value: number, goal: string, met: ((v: number) => boolean) | null): Figure {
  if (!Number.isFinite(value)) return { figure: name, value: null, goal, met: null };
  return { figure: name, value: round(value), goal, met: met ? met(value) : null };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
