import { setTimeout as sleep } from "node:timers/promises";
import { isProcessGroupAlive } from "@overseer/process";
import { HARNESS_DEFAULTS } from "./harness-defaults.ts";

/** How long to wait for a group to disappear after SIGKILL before giving up: 2 s. */
export const DEFAULT_KILL_WAIT_MS = HARNESS_DEFAULTS.killWaitMs;
/** Liveness polling interval while waiting for a signalled group to exit: 20 ms. */
const POLL_MS = 20;

export type TerminateOutcome = "gone" | "terminated" | "killed" | "survived";

/**
 * Ends every process of group `pgid`: SIGTERM, up to `graceMs` for a clean exit, then SIGKILL
 * and up to `killWaitMs` for the kernel to finish. Returns what it took: `gone` (nothing was
 * left), `terminated` (SIGTERM sufficed), `killed` (SIGKILL was needed) or `survived` (members
 * still alive, e.g. stuck in uninterruptible I/O).
 *
 * A process that called setsid() itself has left the group and is out of reach here; the
 * sandbox's PID namespace (torn down with the run) is what catches those.
 */
export async function terminateProcessGroup(
  pgid: number,
  graceMs: number,
  killWaitMs: number = DEFAULT_KILL_WAIT_MS,
): Promise<TerminateOutcome> {
  if (!isProcessGroupAlive(pgid)) return "gone";
  signalGroup(pgid, "SIGTERM");
  if (await waitGone(pgid, graceMs)) return "terminated";
  signalGroup(pgid, "SIGKILL");
  return (await waitGone(pgid, killWaitMs)) ? "killed" : "survived";
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

async function waitGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (!isProcessGroupAlive(pgid)) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await sleep(Math.min(POLL_MS, left));
  }
}
