import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { REPO_ROOT, spawnCommand, spawnNode } from "./service-process.ts";

/**
 * `overseer up` as its own process: from the TypeScript sources through tsx, from a
 * production build (`node DIR/overseer.js up`), or as the installed `overseer` on PATH. Collects its output; tells the gateway URL,
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
  options: {
    builtDir?: string;
    /** Run the installed `overseer` bin found on `env.PATH` (`npm install -g ./dist`). */
    installed?: boolean;
  } = {},
): UpProcess {
  const entry = options.builtDir
    ? [path.join(options.builtDir, "overseer.js")]
    : ["--import", "tsx", path.join(REPO_ROOT, "packages/cli/src/bin.ts")];
  const { child, output, exited } = options.installed
    ? spawnCommand("overseer", ["up", ...args], env)
    : spawnNode([...entry, "up", ...args], env);
  return {
    child,
    output,
    exited,
    async waitFor(pattern, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(output());
        if (match) return match;
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
          throw new Error(`overseer up never printed ${pattern}:\n${output()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    childPids() {
      const pids = new Map<string, number[]>();
      for (const match of output().matchAll(/overseer up: (?:started|restarted \(\d+\)) (\S+) pid (\d+)/g)) {
        const name = match[1] as string;
        pids.set(name, [...(pids.get(name) ?? []), Number(match[2])]);
      }
      return pids;
    },
  };
}
