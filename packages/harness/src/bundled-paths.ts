import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * Where `overseer-agent` and the fake harness live: `packages/harness/bin/` when this module
 * runs from its TypeScript source, `dist/bin/` beside the bundle when it runs from the
 * production build (`npm run build`, scripts/build.mjs copies the files there).
 */
let binDir: string | undefined;

function bundledBinDir(): string {
  if (binDir === undefined) {
    const candidates = [new URL("../bin", import.meta.url), new URL("./bin", import.meta.url)].map((url) =>
      fileURLToPath(url),
    );
    binDir = candidates.find((dir) => existsSync(`${dir}/overseer-agent`)) ?? (candidates[0] as string);
  }
  return binDir;
}

/**
 * Absolute path of the dir that holds `overseer-agent`. Every run gets it first on `PATH` (a
 * sandbox binds it read-only into the run, at the same or another path).
 */
export function agentBinDir(): string {
  return bundledBinDir();
}

/** Absolute path of the bundled `overseer-agent` command (POSIX sh). */
export function overseerAgentPath(): string {
  return `${bundledBinDir()}/overseer-agent`;
}

/**
 * The commands every run's sandbox places where a process with no environment at all finds them
 * (`env -i overseer-agent …`; the sandbox spec's `commands`): name → file in `binDir`.
 */
export function agentCommands(binDir: string = bundledBinDir()): Record<string, string> {
  return { "overseer-agent": `${binDir}/overseer-agent` };
}

/** Absolute path of the scripted fake harness (`bin/fake-harness.mjs`, plain Node ESM). */
export function fakeHarnessPath(): string {
  return `${bundledBinDir()}/fake-harness.mjs`;
}
