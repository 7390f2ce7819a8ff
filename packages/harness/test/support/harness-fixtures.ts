import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isProcessAlive } from "@overseer/process";
import { createLogger } from "@overseer/runtime";
import { buildHarnessEnv } from "../../src/index.ts";

export const silentLogger = createLogger({ name: "harness-test", level: "silent" });

export interface RunDirs {
  root: string;
  checkout: string;
  control: string;
  promptFile: string;
}

/** Temp dirs for one run; everything is removed by {@link cleanupAll}. */
const created: string[] = [];
const pids: number[] = [];

export function makeRunDirs(prefix = "overseer-harness-"): RunDirs {
  const root = mkdtempSync(join(tmpdir(), prefix));
  created.push(root);
  const checkout = join(root, "checkout");
  const control = join(root, "control");
  mkdirSync(checkout);
  mkdirSync(control);
  return { root, checkout, control, promptFile: join(root, "prompt.md") };
}

export function makeTempDir(prefix = "overseer-harness-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** Remembers a pid the test must make sure is dead at the end. */
export function trackPid(pid: number): void {
  pids.push(pid);
}

export function cleanupAll(): void {
  for (const pid of pids.splice(0)) {
    if (isProcessAlive(pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** String.prototype.isWellFormed (ES2024) for an ES2023 lib: no lone surrogates. */
export function isWellFormed(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

/** The run environment of a harness test: task S00-001, role dev, an execute run, these dirs. */
export function runEnv(
  dirs: RunDirs,
  base: Record<string, string> = { PATH: "/usr/bin:/bin" },
): Record<string, string> {
  return buildHarnessEnv({
    base,
    projectRoot: dirs.checkout,
    taskId: "S00-001",
    role: "dev",
    agentId: "execute-dev-0123456789ab",
    action: "execute",
    promptFile: dirs.promptFile,
    controlDir: dirs.control,
  });
}
