import { spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { currentRunNice, lowerSessionPriority } from "./child-priority.ts";
import { launchPreludeSchema, type PreludeLaunch } from "./launch-prelude.ts";
import { PROCESS_DEFAULTS } from "./process-defaults.ts";
import { SpawnerConnection } from "./process-spawner.ts";
import { perlSpawnerFailed, type SpawnerProgramChoice, spawnerCommand } from "./spawner-program.ts";

/**
 * Starts a command in its own process group, either through the process spawner (the
 * default: process-spawner.ts says why) or with a plain `child_process.spawn` from this
 * process (`useProcessSpawner(false)`, the `OVERSEER_PROCESS_SPAWNER` setting). Both give the
 * same child: same argv, environment and cwd, same stdio, same exit code and signal.
 */

/** The parts of a child process callers use; a ChildProcess and a RemoteChild both have them. */
export interface GroupChild {
  /** Its pid, also its process group id; undefined until it started (or when it failed to). */
  readonly pid: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  once(event: "error", listener: (error: Error) => void): this;
  once(event: "spawn", listener: () => void): this;
  once(event: "exit" | "close", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

export interface SpawnGroupOptions {
  cwd: string;
  /** Exactly the child's environment (nothing of this process's is added). */
  env: Record<string, string>;
  /** Pipe the child's stdin; else it reads /dev/null. */
  stdin: boolean;
  /**
   * The same command without its launcher (launch-prelude.ts): spawned instead of `file args`,
   * with an empty environment, when the live spawner applies launch preludes itself.
   */
  preludeLaunch?: PreludeLaunch;
}

export interface SpawnedGroup {
  readonly child: GroupChild;
  /** Signals the child's whole process group; a signal sent before it started is sent when it does. */
  kill(signal: NodeJS.Signals): void;
}

let spawnerEnabled: boolean = PROCESS_DEFAULTS.spawner;
let programChoice: SpawnerProgramChoice = PROCESS_DEFAULTS.spawnerProgram;
let connection: SpawnerConnection | undefined;
/** The choice `connection` was started for. */
let connectionChoice: SpawnerProgramChoice | undefined;

/**
 * Whether children are started through the process spawner (default `true`, the services set
 * it from `OVERSEER_PROCESS_SPAWNER`), and which one (spawner-program.ts; default `auto`, from
 * `OVERSEER_PROCESS_SPAWNER_PROGRAM`). A running spawner that is no longer wanted ends its calls,
 * then exits.
 */
export function useProcessSpawner(enabled: boolean, program: SpawnerProgramChoice = programChoice): void {
  spawnerEnabled = enabled;
  programChoice = program;
}

/** The live spawner, started on first use and again after one died; undefined when off or not found. */
function spawner(): SpawnerConnection | undefined {
  if (!spawnerEnabled) return undefined;
  if (connection?.alive && connectionChoice === programChoice) return connection;
  if (connection?.alive) connection.retire();
  if (connection && !connection.alive && connection.failedToRun && connection.kind === "perl")
    perlSpawnerFailed();
  const command = spawnerCommand(programChoice);
  if (command === undefined) return undefined;
  connection = new SpawnerConnection(command);
  connectionChoice = programChoice;
  // The spawner's own work (relaying git's output) is run work too.
  if (connection.process.pid !== undefined) lowerSessionPriority(connection.process.pid, currentRunNice());
  return connection;
}

/** The spawner's pid when one runs (tests and benchmarks look at it). */
export function processSpawnerPid(): number | undefined {
  return connection?.alive ? connection.process.pid : undefined;
}

/**
 * Whether spawns run a `preludeLaunch`: the live spawner (started here if need be) applies launch
 * preludes, once its HELLO said so. Tests and benchmarks ask; spawnGroup decides per spawn (a
 * spawn before the HELLO arrived runs the launcher).
 */
export function launchPreludeAvailable(): Promise<boolean> {
  return spawner()?.hello ?? Promise.resolve(false);
}

/** Starts `file args` in a new process group and session, without a shell, at the run niceness (child-priority.ts). */
export function spawnGroup(file: string, args: readonly string[], options: SpawnGroupOptions): SpawnedGroup {
  // Checked whichever way it goes: a bad prelude is the caller's bug, not a spawner's to find.
  const prelude = options.preludeLaunch && launchPreludeSchema.parse(options.preludeLaunch.prelude);
  const remote = spawner();
  const direct = remote?.launchPrelude ? options.preludeLaunch : undefined;
  const child: GroupChild = remote
    ? remote.spawn({
        file: direct?.file ?? file,
        args: direct?.args ?? args,
        cwd: options.cwd,
        env: direct ? {} : options.env,
        stdin: options.stdin,
        detached: true,
        nice: currentRunNice(),
        ...(direct ? { prelude } : {}),
      })
    : (spawn(file, [...args], {
        cwd: options.cwd,
        env: options.env,
        stdio: [options.stdin ? "pipe" : "ignore", "pipe", "pipe"],
        detached: true,
        windowsHide: true,
      }) as unknown as GroupChild);
  let pending: NodeJS.Signals | undefined;
  const started = () => {
    const pid = child.pid as number;
    // Through the spawner, the spawner lowers it (the request's `nice`).
    if (!remote) lowerSessionPriority(pid, currentRunNice());
    trackGroup(pid);
    child.once("close", () => liveGroups.delete(pid));
    if (pending) killGroup(pid, pending);
  };
  if (child.pid !== undefined) started();
  else child.once("spawn", started);
  return {
    child,
    kill(signal) {
      if (child.pid === undefined) pending = signal;
      else killGroup(child.pid, signal);
    },
  };
}

/**
 * Process groups of running children. Being detached, they would outlive this process; when it
 * exits (normally or through a handled signal) they are killed with it. (A spawner also kills
 * its children's groups when this process is gone, however it ended.)
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function trackGroup(pid: number): void {
  liveGroups.add(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const group of liveGroups) killGroup(group, "SIGKILL");
  });
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}
