import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { autogroupsEnabled } from "./child-priority.ts";

/**
 * A service's own CPU priority: the worker lowers its own (`OVERSEER_WORKER_NICE`) below the
 * gateway's and the coordinator's, as child-priority.ts lowers its runs' below all services.
 *
 * Why. The worker's own loop is batch work: spawning, reporting, pushing for its runs. The
 * gateway answers people. At 1,000 busy projects on two cores, with runs at niceness 10, the
 * services at niceness 0 still kept both cores busy, and the gateway's p99 was 86–173 ms (fleet)
 * and 122–335 ms (status), most of it its garbage collector's pauses waiting for a core. With the
 * workers at niceness 5 it was 17–33 and 38–69 ms; at 10, the runs' own niceness (the worker's
 * loop is its runs' work), 11–14 and 20–23 ms, and throughput did not drop. The worker still
 * gets every cycle the others leave.
 *
 * Only lowering, so no privilege is needed:
 * - every thread's niceness: Linux keeps one per thread, and V8's and libuv's threads that exist
 *   already keep theirs otherwise (threads made later inherit their creator's);
 * - where each session is a scheduling group (autogroup), the group's, but only when this
 *   process leads its session (`overseer up` and containers start each service so): a service
 *   started from a shell beside others would lower theirs with it.
 */
export interface OwnPriority {
  /** The niceness this process runs at now (its main thread's). */
  nice: number;
  /** Whether its session's scheduling group got it too. */
  sessionGroup: boolean;
}

/** Lowers this process's CPU priority to niceness `nice` (never raises it); 0 leaves it. */
export function lowerOwnPriority(nice: number): OwnPriority {
  if (nice > 0) {
    for (const tid of threads()) {
      try {
        if (getPriority(tid) < nice) setPriority(tid, nice);
      } catch {
        // A thread that ended meanwhile.
      }
    }
  }
  const sessionGroup = nice > 0 && autogroupsEnabled() && leadsSession() && lowerSessionGroup(nice);
  return { nice: getPriority(0), sessionGroup };
}

function threads(): number[] {
  try {
    return readdirSync("/proc/self/task").map(Number);
  } catch {
    return [process.pid];
  }
}

/** Whether this process leads its session (field 6 of /proc/self/stat, after the command name). */
function leadsSession(): boolean {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]) === process.pid;
  } catch {
    return false;
  }
}

/**
 * Lowers this session's group. The kernel's default group (the root's, for sessions never made
 * since boot) shows an empty file and takes no niceness: nothing to lower there.
 */
function lowerSessionGroup(nice: number): boolean {
  try {
    const current = / nice (-?\d+)/.exec(readFileSync("/proc/self/autogroup", "utf8"))?.[1];
    if (current === undefined) return false;
    if (Number(current) < nice) writeFileSync("/proc/self/autogroup", String(nice));
    return true;
  } catch {
    return false;
  }
}
