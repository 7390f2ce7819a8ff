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
  const { child, output, exited } = spawnNode(entry, env);
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

/** {@link spawnNode} for any command: `file` is a path, or a name looked up on `env`'s PATH. */
export function spawnCommand(file: string, argv: string[], env: Record<string, string>): SpawnedNode {
  const child = spawn(file, argv, {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
      // Lets the leak check (leak-check.ts) attribute the process to this test run.
      ...(process.env.OVERSEER_TEST_RUN ? { OVERSEER_TEST_RUN: process.env.OVERSEER_TEST_RUN } : {}),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
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
