import { readdirSync, readFileSync } from "node:fs";

/**
 * Whether a process or a process group still runs, the one place Overseer asks.
 *
 * `kill(pid, 0)` answers "exists": EPERM means it exists under another uid, ESRCH that it is
 * gone. A process that died but was not yet reaped stays visible as a zombie, and some inits
 * (container and VM agents) reap lazily, so on Linux the answer is confirmed through /proc and
 * zombies count as gone. Where /proc says nothing (another PID namespace, not Linux) the
 * `kill` answer stands.
 */

interface ProcState {
  pid: number;
  state: string;
  pgid: number;
}

/** True while process `pid` exists and is not a zombie. */
export function isProcessAlive(pid: number): boolean {
  if (!signalZero(pid)) return false;
  const state = readProcState(pid);
  return state === null ? true : state.state !== "Z";
}

/** True while any live (non-zombie) process is in process group `pgid`. */
export function isProcessGroupAlive(pgid: number): boolean {
  if (!signalZero(-pgid)) return false;
  // An empty listing (the group vanished between the two looks, or /proc shows another PID
  // namespace) counts as alive: the next look settles it.
  const members = listGroupMembers(pgid);
  return members === null || members.length === 0 || members.some((m) => m.state !== "Z");
}

function signalZero(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
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
