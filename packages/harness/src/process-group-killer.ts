import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** How long to wait for a group to disappear after SIGKILL before giving up: 2 s. */
export const DEFAULT_KILL_WAIT_MS = 2000;
/** Liveness polling interval while waiting for a signalled group to exit: 20 ms. */
const POLL_MS = 20;

/**
 * True while any live (non-zombie) process is in process group `pgid`.
 *
 * `kill(-pgid, 0)` alone is not enough: an orphaned member that already died stays in the
 * group as a zombie until init reaps it, and some inits (container/VM agents) reap lazily.
 * On Linux the group's members are therefore confirmed through /proc and zombies ignored.
 */
export function isProcessGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  // An empty listing (the group vanished between the two looks, or /proc shows another PID
  // namespace) counts as alive: the next kill(-pgid, 0) settles it.
  const members = listGroupMembers(pgid);
  return members === null || members.length === 0 || members.some((m) => m.state !== "Z");
}

/** True while process `pid` exists and is not a zombie. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  const state = readProcState(pid);
  return state === null ? true : state.state !== "Z";
}

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

interface ProcState {
  pid: number;
  state: string;
  pgid: number;
}

/** Members of a group from /proc, or null where /proc is unavailable. */
function listGroupMembers(pgid: number): ProcState[] | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const members: ProcState[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcState(Number(entry));
    if (stat && stat.pgid === pgid) members.push(stat);
  }
  return members;
}

function readProcState(pid: number): ProcState | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) S ppid pgrp …": comm may hold spaces and parentheses, so parse after the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid, state: fields[0] ?? "?", pgid: Number(fields[2]) };
  } catch {
    return null;
  }
}
