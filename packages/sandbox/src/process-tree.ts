import { readdir, readFile } from "node:fs/promises";
import { SandboxSpecError } from "./sandbox-errors.ts";

/**
 * Host-side process bookkeeping used to stop a run. It reads `/proc` of the worker's (host) pid
 * namespace, which also shows every process inside a sandbox's child pid namespace, so the
 * worker can deliver a graceful SIGTERM to the agent even though the agent runs behind bwrap.
 */

const POLL_INTERVAL_MS = 25;

interface ProcStat {
  ppid: number;
  state: string;
}

async function readStat(pid: number): Promise<ProcStat | null> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, "utf8");
    // comm (field 2) may contain spaces and parentheses: parse from the last ')'.
    const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: rest[0] ?? "?", ppid: Number(rest[1]) };
  } catch {
    return null;
  }
}

/** Every live descendant of `pid` (children first-level, then deeper), as seen from this pid namespace. */
export async function listDescendants(pid: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readStat(Number(entry));
    if (stat === null) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push(Number(entry));
    children.set(stat.ppid, list);
  }
  const result: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift() as number;
    result.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return result;
}

/** True while `pid` exists and is not a zombie. */
export async function isProcessRunning(pid: number): Promise<boolean> {
  const stat = await readStat(pid);
  return stat !== null && stat.state !== "Z" && stat.state !== "X";
}

/** Waits until `pid` has exited (or is a zombie), at most `timeoutMs`. Returns whether it exited. */
export async function waitForProcessExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (await isProcessRunning(pid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
  return true;
}

function trySignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH: already gone; EPERM cannot happen for the worker's own children.
  }
}

export interface StopTreeOptions {
  graceMs: number;
  /**
   * Do not SIGTERM `pid` itself during the grace phase. Used for bwrap, whose outer process would
   * end the whole sandbox with SIGKILL (die-with-parent) instead of letting the agent exit cleanly.
   */
  spareRoot: boolean;
}

/**
 * SIGTERM to the process group and every descendant of `pid`, wait up to `graceMs` for `pid` to
 * exit, then SIGKILL the group and whatever descendants are still around.
 */
export async function stopProcessTree(pid: number, options: StopTreeOptions): Promise<void> {
  // kill(-0) or kill(-1) would signal the worker's own process group or every process: never.
  if (!Number.isInteger(pid) || pid <= 1) {
    throw new SandboxSpecError(`stop: expected the positive pid of the spawned command, received ${pid}`);
  }
  const descendants = await listDescendants(pid);
  if (!options.spareRoot) trySignal(-pid, "SIGTERM");
  for (const child of descendants) trySignal(child, "SIGTERM");
  const exited = await waitForProcessExit(pid, options.graceMs);
  trySignal(-pid, "SIGKILL");
  if (!exited) trySignal(pid, "SIGKILL");
  for (const child of [...descendants, ...(await listDescendants(pid))]) trySignal(child, "SIGKILL");
}
