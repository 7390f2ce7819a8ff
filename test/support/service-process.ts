import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

export const REPO_ROOT = path.resolve(import.meta.dirname, "../..");

const ENTRY = {
  coordinator: "services/coordinator/src/coordinator-main.ts",
  worker: "services/worker/src/worker-main.ts",
  gateway: "services/gateway/src/gateway-main.ts",
} as const;

export type ServiceName = keyof typeof ENTRY;

export interface ServiceProcess {
  name: ServiceName;
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<number | string | null>;
  /** Sends `signal` (default SIGTERM), then SIGKILL if the process is still there after `escalateAfterMs`. */
  kill(signal?: NodeJS.Signals, escalateAfterMs?: number): Promise<number | string | null>;
}

export interface StartServiceOptions {
  /**
   * A production build's output dir (`npm run build`, scripts/build.mjs): runs `node
   * DIR/<name>.js` with no tsx. Default: the TypeScript entry point through tsx.
   */
  builtDir?: string;
  /** Node options before the entry point (the scale bench's `--cpu-prof`, which NODE_OPTIONS refuses). */
  nodeArgs?: readonly string[];
  /**
   * Starts the service in a session of its own, as `overseer up` (supervised-child.ts) and a
   * container each run theirs. Where the kernel gives each session a scheduling group
   * (autogroup), services that share the test's session share one group's CPU weight.
   */
  session?: boolean;
}

/** Starts a service as its own Node process (TypeScript through tsx, or a production build). */
export function startService(
  name: ServiceName,
  env: Record<string, string>,
  options: StartServiceOptions = {},
): ServiceProcess {
  const entry = [
    ...(options.nodeArgs ?? []),
    ...(options.builtDir
      ? [path.join(options.builtDir, `${name}.js`)]
      : ["--import", "tsx", path.join(REPO_ROOT, ENTRY[name])]),
  ];
  const { child, output, exited } = spawnCommand(process.execPath, entry, env, {
    session: options.session === true,
  });
  return {
    name,
    child,
    output,
    exited,
    kill: async (signal = "SIGTERM", escalateAfterMs = 10_000) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      // A service that does not finish its graceful shutdown in time is killed.
      const timer = setTimeout(() => child.kill("SIGKILL"), escalateAfterMs);
      timer.unref();
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** A Node child process of the test, its output (last 200 kB) and its end. */
export interface SpawnedNode {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<number | string | null>;
}

/**
 * Runs `node ...argv` from the repository root with only PATH, HOME and `env` (plus the leak
 * check's run id) in its environment, collecting stdout and stderr together.
 */
export function spawnNode(argv: string[], env: Record<string, string>): SpawnedNode {
  return spawnCommand(process.execPath, argv, env);
}

/**
 * {@link spawnNode} for any command: `file` is a path, or a name looked up on `env`'s PATH;
 * `session` starts it in a session of its own.
 */
export function spawnCommand(
  file: string,
  argv: string[],
  env: Record<string, string>,
  options: { session?: boolean } = {},
): SpawnedNode {
  const child = spawn(file, argv, {
    cwd: REPO_ROOT,
    detached: options.session === true,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
      // Lets the leak check (leak-check.ts) attribute the process to this test run.
      ...(process.env.OVERSEER_TEST_RUN ? { OVERSEER_TEST_RUN: process.env.OVERSEER_TEST_RUN } : {}),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (options.session) endWithThisProcess(child);
  let out = "";
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString("utf8")).slice(-200_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | string | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal)),
  );
  return { child, output: () => out, exited };
}

const sessionChildren = new Set<ChildProcess>();

/**
 * A child in a session of its own does not get the terminal's Ctrl-C, nor dies with this process:
 * it is sent the signal that ends this process, and SIGKILL if it is still there when this
 * process exits.
 */
function endWithThisProcess(child: ChildProcess): void {
  if (sessionChildren.size === 0) {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
      process.once(signal, () => {
        for (const c of sessionChildren) c.kill(signal);
        process.kill(process.pid, signal);
      });
    process.once("exit", () => {
      for (const c of sessionChildren) c.kill("SIGKILL");
    });
  }
  sessionChildren.add(child);
  child.once("exit", () => sessionChildren.delete(child));
}
