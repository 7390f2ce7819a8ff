import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { REPO_ROOT } from "./service-process.ts";

/**
 * `overseer up` as its own process: from the TypeScript sources through tsx, or from a
 * production build (`node DIR/overseer.js up`). Collects its output; tells the gateway URL,
 * the token and the children's pids once printed.
 */
export interface UpProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | string | null>;
  /** Waits until `pattern` matches the output (fails with the output when the process ends first). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Pids of the children as announced (`started NAME pid N`, `restarted (n) NAME pid N`). */
  childPids(): Map<string, number[]>;
}

export function startUp(
  args: string[],
  env: Record<string, string>,
  options: { builtDir?: string } = {},
): UpProcess {
  const entry = options.builtDir
    ? [path.join(options.builtDir, "overseer.js")]
    : ["--import", "tsx", path.join(REPO_ROOT, "packages/cli/src/bin.ts")];
  const child = spawn(process.execPath, [...entry, "up", ...args], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
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
  return {
    child,
    output: () => out,
    exited,
    async waitFor(pattern, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(out);
        if (match) return match;
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
          throw new Error(`overseer up never printed ${pattern}:\n${out}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    childPids() {
      const pids = new Map<string, number[]>();
      for (const match of out.matchAll(/overseer up: (?:started|restarted \(\d+\)) (\S+) pid (\d+)/g)) {
        const name = match[1] as string;
        pids.set(name, [...(pids.get(name) ?? []), Number(match[2])]);
      }
      return pids;
    },
  };
}
