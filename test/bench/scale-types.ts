/** The scale bench's options and what its phases share and measure (scale-bench.ts, scale-report.ts). */
import type { Redis } from "@overseer/queue";
import type { ClusterFixture } from "../support/cluster-fixture.ts";
import type { ServicesMode } from "./bench-services.ts";
import type { FloorResult } from "./git-floor-bench.ts";
import type { CommandCounter, PhaseCounts, StatementCounter, Timings } from "./scale-counters.ts";
import type { CpuParts } from "./scale-cpu.ts";
import type { GatewayLatencies, GatewayProbe } from "./scale-gateway-probe.ts";
import type { ScaleProgress } from "./scale-progress.ts";

export interface ScaleOptions {
  projects: number;
  tasksPerProject: number;
  overheadTasks: number;
  /** Tasks run before the first measured phase, over projects of their own (the warm phase). */
  warmupTasks: number;
  idleSeconds: number;
  longRuns: number;
  windowSeconds: number;
  workers: number;
  workerConcurrency: number;
  floorIterations: number;
  /** Every phase's bound in seconds; 0: each phase's own, scaled with its size (scale-progress.ts). */
  phaseTimeoutSeconds: number;
  /** A phase fails when nothing progressed this long; 0: 60 s + 0.1 s per project. */
  stallSeconds: number;
  /** Gateway probe requests a second, per route (fleet, status), open loop. */
  probeRate: number;
  /** How the services run: the production build (default) or TypeScript through tsx (`--tsx`). */
  services: ServicesMode;
  /**
   * A dir for the workers' CPU profiles (`node --cpu-prof`, written as each worker exits at the
   * bench's end; `--scale-worker-cpu-prof DIR`), or "" for none.
   */
  workerCpuProfDir: string;
  /** The same for the coordinator (`--scale-coordinator-cpu-prof DIR`), or "" for none. */
  coordinatorCpuProfDir: string;
  /** The same for the probe's gateway (`--scale-gateway-cpu-prof DIR`), or "" for none. */
  gatewayCpuProfDir: string;
}

/** What the phases share: the cluster, its counters and services, the probe. */
export interface Rig {
  cluster: ClusterFixture;
  counters: { statements: StatementCounter; commands: CommandCounter };
  monitor: Redis;
  coordinatorPid: number | undefined;
  workerPids: (number | undefined)[];
  /** The processes whose CPU each phase splits (scale-cpu.ts). */
  cpuParts: CpuParts;
  gateway: GatewayProbe;
  progress: ScaleProgress;
  /** Why a service is gone (it exited during the bench), or null. */
  broken: () => string | null;
}

export interface Measured {
  /** The git floor measured again after the idle phases (the first is before every phase). */
  floorAfter: FloorResult;
  one: PhaseCounts;
  oneTimings: Timings;
  busy: PhaseCounts;
  busyTimings: Timings;
  gatewayLatencies: GatewayLatencies;
  idle: PhaseCounts;
  /** Idle at a tenth of the projects (the rest paused), for flatness; null below 10 projects. */
  idleSmall: { projects: number; counts: PhaseCounts } | null;
  long: PhaseCounts;
  stillRunning: number;
  memoryPerRun: number;
  memoryByKind: Record<string, { keys: number; bytes: number }>;
  keysPerRun: number;
}
