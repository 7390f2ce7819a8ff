/**
 * The scale bench's gateway figure without the rest of the scale bench (7 minutes that load the
 * whole machine): `npm run bench:gateway-load -- [--projects 1000] [--seconds 60] [--busy 2]
 * [--churn 4] [--rate 10] [--tsx] [--cpu-prof DIR]`.
 *
 * A gateway process (the production build, as the scale bench runs it; `--tsx`: through tsx) on
 * a scratch database with
 * `--projects` active projects of 2 tasks each, while
 * - a churn process applies transitions (claim → run-started → timeout, a new task when a project
 *   has nothing runnable) on random projects from `--churn` lanes: each NOTIFYs, as the
 *   coordinator's and workers' transitions do, and fills `runs` with ended runs (the fleet's
 *   throughput);
 * - `--busy` processes spin on the CPU, standing for the workers and their sandboxes;
 * - the scale bench's GatewayProbe asks for the fleet and one project's status (the projects in
 *   turn) `--rate` times a second each, open loop.
 * With `--cpu-prof DIR` the gateway writes a CPU profile (node --cpu-prof) into DIR as it exits.
 * Prints the probe's percentiles per route, the gateway's CPU-ms per request and the churn's
 * transitions/s, as JSON.
 */
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { applyTransition, connectDatabase, type Db } from "@overseer/db";
import { importTasks, TransitionApplier } from "@overseer/transitions";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { benchTasks, seedActiveProject } from "./bench-seed.ts";
import { benchServices, servicesCondition } from "./bench-services.ts";
import { GatewayProbe } from "./scale-gateway-probe.ts";

const { values } = parseArgs({
  options: {
    projects: { type: "string", default: "1000" },
    seconds: { type: "string", default: "60" },
    busy: { type: "string", default: "2" },
    churn: { type: "string", default: "4" },
    rate: { type: "string", default: "10" },
    tsx: { type: "boolean", default: false },
    "cpu-prof": { type: "string" },
    "churn-child": { type: "string" },
  },
});
const projects = Number(values.projects);
const ids = Array.from({ length: projects }, (_, i) => `p-${i}`);

if (values["churn-child"]) await churnChild(values["churn-child"], Number(values.churn));
else await main();

async function main(): Promise<void> {
  const log = (line: string) => process.stderr.write(`[gateway-load] ${line}\n`);
  const cluster = await new ClusterFixture().setup();
  const children: { kill(): void }[] = [];
  try {
    const t0 = performance.now();
    await inParallel(ids, 8, (id) =>
      seedActiveProject(cluster.scratch.db, id, 2, { objective: "Gateway load bench", concurrency: 1 }),
    );
    log(`${projects} projects seeded in ${Math.round(performance.now() - t0)} ms`);
    const mode = values.tsx ? "tsx" : "build";
    const profDir = values["cpu-prof"] ? path.resolve(values["cpu-prof"]) : null;
    const services = {
      ...(await benchServices(mode)),
      ...(profDir ? { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profDir}`] } : {}),
    };
    const probe = await GatewayProbe.start(cluster, ids[0] as string, 120_000, services);
    const churn = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        import.meta.filename,
        "--projects",
        String(projects),
        "--churn",
        String(values.churn),
        "--churn-child",
        cluster.scratch.url,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    children.push(churn);
    let churnOut = "";
    churn.stdout.on("data", (chunk: Buffer) => {
      churnOut += chunk.toString();
    });
    for (let i = 0; i < Number(values.busy); i++)
      children.push(spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
    // Its module loading through tsx takes seconds on a loaded machine; its first seconds fill
    // `runs`; the probe measures after them.
    await new Promise<void>((resolve, reject) => {
      churn.stdout.once("data", () => resolve());
      churn.once("exit", (code) => reject(new Error(`the churn exited (${code}) before it started`)));
    });
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const gatewayPid = probe.pid;
    const cpu0 = await treeCpuMs(gatewayPid);
    const load0 = (await readFile("/proc/loadavg", "utf8")).split(" ")[0];
    await probe.begin(ids, Number(values.rate));
    await new Promise((resolve) => setTimeout(resolve, Number(values.seconds) * 1000));
    const latencies = await probe.end();
    const cpuMs = (await treeCpuMs(gatewayPid)) - cpu0;
    const load1 = (await readFile("/proc/loadavg", "utf8")).split(" ")[0];
    if (churn.exitCode === null) {
      churn.kill("SIGTERM");
      await new Promise((resolve) => churn.once("exit", resolve));
    }
    const transitions = Number(/transitions (\d+)/.exec(churnOut)?.[1] ?? 0);
    console.log(
      JSON.stringify(
        {
          projects,
          services: servicesCondition(mode),
          seconds: Number(values.seconds),
          busyLoops: Number(values.busy),
          loadAverage: [load0, load1],
          transitionsPerSecond: Math.round(transitions / (Number(values.seconds) + 5)),
          ...latencies,
          gatewayCpuMsPerRequest: Math.round((cpuMs / Math.max(1, latencies.requests)) * 100) / 100,
        },
        null,
        2,
      ),
    );
    await probe.close();
  } finally {
    for (const child of children) child.kill();
    await cluster.teardown();
  }
}

/** The churn: transitions on random projects from `lanes` lanes until SIGTERM, then their count on stdout. */
async function churnChild(url: string, lanes: number): Promise<void> {
  const handle = connectDatabase(url);
  const db: Db = handle.db;
  const applier = new TransitionApplier({ db });
  let count = 0;
  let stopping = false;
  let fresh = 0;
  process.on("SIGTERM", () => {
    stopping = true;
  });
  process.stdout.write("started\n");
  // Each lane has projects of its own (no two transitions on one project at once).
  const lane = async (n: number) => {
    const mine = ids.filter((_, i) => i % lanes === n);
    while (!stopping) {
      const id = mine[Math.floor(Math.random() * mine.length)] as string;
      const claimed = await applyTransition(db, id, { kind: "claim" });
      count++;
      const run = claimed.changes.runs[0];
      if (!run) {
        await importTasks(
          applier,
          id,
          benchTasks(1).map((t) => ({ ...t, id: `S01-${String(++fresh).padStart(5, "0")}` })),
        );
        count++;
        continue;
      }
      await applyTransition(db, id, { kind: "run-started", runId: run.id, workerId: "w-load" });
      await applyTransition(db, id, { kind: "timeout", runId: run.id, stalled: false, seconds: 1 });
      count += 2;
    }
  };
  await Promise.all(Array.from({ length: lanes }, (_, n) => lane(n)));
  process.stdout.write(`transitions ${count}\n`);
  await handle.close();
}

/** CPU-ms (user + system) of `pid` and its descendants (tsx runs the gateway in a child node). */
async function treeCpuMs(pid: number): Promise<number> {
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const text = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    if (fields.length < 15) continue;
    stats.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
  }
  const inTree = (p: number): boolean => p === pid || (p > 1 && inTree(stats.get(p)?.ppid ?? 0));
  let ticks = 0;
  for (const [p, s] of stats) if (inTree(p)) ticks += s.ticks;
  return ticks * 10;
}

async function inParallel<T>(
  items: readonly T[],
  n: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: n }, lane));
}
