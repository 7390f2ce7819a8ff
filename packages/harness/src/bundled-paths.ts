import { fileURLToPath } from "node:url";

/**
 * Absolute path of this package's `bin/` dir, which holds `overseer-agent`. Every run gets it
 * first on `PATH` (a sandbox binds it read-only into the run, at the same or another path).
 */
export function agentBinDir(): string {
  return fileURLToPath(new URL("../bin", import.meta.url));
}

/** Absolute path of the bundled `overseer-agent` command (POSIX sh). */
export function overseerAgentPath(): string {
  return fileURLToPath(new URL("../bin/overseer-agent", import.meta.url));
}

/** Absolute path of the scripted fake harness (`bin/fake-harness.mjs`, plain Node ESM). */
export function fakeHarnessPath(): string {
  return fileURLToPath(new URL("../bin/fake-harness.mjs", import.meta.url));
}
