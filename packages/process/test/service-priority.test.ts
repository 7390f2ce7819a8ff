import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const SOURCE = fileURLToPath(new URL("../src/service-priority.ts", import.meta.url));
const AUTOGROUPS = readFileSync("/proc/sys/kernel/sched_autogroup_enabled", "utf8").trim() === "1";

/**
 * The niceness of a process's session group, or null where there is none to read: autogroups
 * off, or the process in the kernel's default group (sessions never made since boot, as under a
 * CI runner's PID 1), whose file is empty.
 */
function sessionGroupNice(pid: number | "self"): number | null {
  if (!AUTOGROUPS) return null;
  const nice = / nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, "utf8"))?.[1];
  return nice === undefined ? null : Number(nice);
}

/**
 * A fresh Node process that lowers its own priority to `nice`, then starts a worker thread, and
 * prints what it got, every thread's niceness and its session group's.
 */
const PROBE = `
import { readdirSync, readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
const { lowerOwnPriority } = await import(process.env.SOURCE);
const result = lowerOwnPriority(Number(process.env.NICE));
const worker = new Worker("setInterval(() => {}, 1000)", { eval: true });
await new Promise((resolve) => worker.once("online", resolve));
const nice = (stat) => Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
const threads = readdirSync("/proc/self/task").map((t) => nice(readFileSync("/proc/self/task/" + t + "/stat", "utf8")));
const group = /nice (-?\\d+)/.exec(readFileSync("/proc/self/autogroup", "utf8"))?.[1];
console.log(JSON.stringify({ result, threads, group: group === undefined ? null : Number(group) }));
await worker.terminate();
`;

interface ProbeOutput {
  result: { nice: number; sessionGroup: boolean };
  threads: number[];
  group: number | null;
}

async function probe(nice: number, session: boolean): Promise<ProbeOutput> {
  const args = ["--import", "tsx", "--input-type=module", "-e", PROBE];
  const env = { ...process.env, SOURCE, NICE: String(nice) };
  if (!session) {
    const { stdout } = await promisify(execFile)(process.execPath, args, { env });
    return JSON.parse(stdout) as ProbeOutput;
  }
  const child = spawn(process.execPath, args, { env, detached: true, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  expect(code).toBe(0);
  return JSON.parse(out) as ProbeOutput;
}

describe("lowerOwnPriority", () => {
  it("lowers every thread, those started after it too, and the group of the session it leads", async () => {
    const { result, threads, group } = await probe(7, true);
    expect(result.nice).toBe(7);
    // Node's own threads (V8's platform workers, libuv's) and the worker thread made after.
    expect(threads.length).toBeGreaterThan(4);
    expect(threads.every((n) => n === 7)).toBe(true);
    expect(result.sessionGroup).toBe(AUTOGROUPS);
    if (AUTOGROUPS) expect(group).toBe(7);
  });

  it("leaves the session's group alone in a session it does not lead (a shell's, shared with others)", async () => {
    const before = sessionGroupNice("self");
    const { result, threads, group } = await probe(6, false);
    expect(result).toEqual({ nice: 6, sessionGroup: false });
    expect(threads.every((n) => n === 6)).toBe(true);
    // The child shares this test's session: its group, and so ours, kept its niceness.
    expect(group).toBe(before);
    expect(sessionGroupNice("self")).toBe(before);
  });

  it("never raises a priority, and 0 leaves the process as it is", async () => {
    // Started at niceness 9: asked for 3 it stays at 9; asked for 0 it changes nothing.
    for (const [asked, expected] of [
      [3, 9],
      [0, 9],
    ] as const) {
      const args = ["-n", "9", process.execPath, "--import", "tsx", "--input-type=module", "-e", PROBE];
      const env = { ...process.env, SOURCE, NICE: String(asked) };
      const { stdout } = await promisify(execFile)("nice", args, { env });
      const { result, threads } = JSON.parse(stdout) as ProbeOutput;
      expect(result.nice).toBe(expected);
      expect(result.sessionGroup).toBe(false);
      expect(threads.every((n) => n === expected)).toBe(true);
    }
  });
});
