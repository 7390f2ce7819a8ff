/**
 * A/B of a sandboxed run's launch through the Perl process spawner: with the launch prelude
 * (bwrap exec'd by the spawner's child) against the bash host launcher (the same prepared
 * command without its preludeLaunch). `/bin/true` in a bwrap sandbox, `runs` per series, series
 * interleaved `rounds` times; the CPU counted is the spawner's own and its reaped children's
 * (/proc/<spawner>/stat utime+stime+cutime+cstime: the launcher or the prelude, bwrap, true).
 * With `--execs`, each series also runs under `perf record -e sched:sched_process_exec` attached
 * to the spawner, and the execs per run are counted by program.
 *
 *   node --import tsx test/bench/launch-prelude-probe.ts [runs=100] [rounds=5] [--execs]
 *
 * Prints one JSON object. Run as root on a host where the bwrap driver works.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchPreludeAvailable, processSpawnerPid, useProcessSpawner } from "@overseer/process";
import { BwrapDriver, type PreparedCommand, runPreparedCommand } from "@overseer/sandbox";

type Mode = "prelude" | "launcher";

const TICK_MS = 10; // USER_HZ 100

function spawnerCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) * TICK_MS;
}

async function runOnce(driver: BwrapDriver, base: string, mode: Mode): Promise<void> {
  const prepared = await driver.prepare(["/bin/true"], {
    checkoutDir: join(base, "checkout"),
    controlDir: join(base, "control"),
    env: { PATH: "/usr/bin:/bin" },
  });
  const command =
    mode === "prelude"
      ? prepared
      : (Object.assign(Object.create(prepared), { preludeLaunch: undefined }) as PreparedCommand);
  try {
    const result = await runPreparedCommand(command, { timeoutMs: 20_000 });
    if (result.exitCode !== 0) throw new Error(`${mode} run exited ${result.exitCode}: ${result.stderr}`);
  } finally {
    await prepared.cleanup();
  }
}

/** CPU ms of the spawner and its children per run, over `runs` runs in `mode`. */
async function series(driver: BwrapDriver, base: string, mode: Mode, runs: number): Promise<number> {
  const pid = processSpawnerPid() as number;
  const before = spawnerCpuMs(pid);
  for (let i = 0; i < runs; i++) await runOnce(driver, base, mode);
  return (spawnerCpuMs(pid) - before) / runs;
}

/** Execs per run by program, counted by perf attached to the spawner (and what it starts). */
async function execsPerRun(driver: BwrapDriver, base: string, mode: Mode, runs: number) {
  const out = join(base, `perf-${mode}.data`);
  const pid = processSpawnerPid() as number;
  const perf = spawn(
    "perf",
    ["record", "-q", "-e", "sched:sched_process_exec", "-p", String(pid), "-o", out],
    {
      stdio: "ignore",
    },
  );
  await new Promise((resolve) => setTimeout(resolve, 1500));
  for (let i = 0; i < runs; i++) await runOnce(driver, base, mode);
  await new Promise((resolve) => setTimeout(resolve, 500));
  perf.kill("SIGINT");
  await new Promise((resolve) => perf.once("close", resolve));
  const script = await new Promise<string>((resolve) => {
    const reader = spawn("perf", ["script", "-i", out], { stdio: ["ignore", "pipe", "ignore"] });
    let text = "";
    reader.stdout.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    reader.once("close", () => resolve(text));
  });
  const counts: Record<string, number> = {};
  for (const match of script.matchAll(/filename=(\S+)/g)) {
    const name = match[1] as string;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).map(([name, n]) => [name, n / runs]));
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function main(): Promise<void> {
  const [runs = 100, rounds = 5] = process.argv
    .slice(2)
    .filter((a) => /^\d+$/.test(a))
    .map(Number);
  const base = mkdtempSync(join(tmpdir(), "overseer-prelude-bench-"));
  const driver = new BwrapDriver({ runtimeRoot: join(base, "rt") });
  const keepAlive = setInterval(() => undefined, 60_000);
  try {
    for (const dir of ["checkout", "control"])
      await import("node:fs/promises").then((fs) => fs.mkdir(join(base, dir)));
    useProcessSpawner(true, "perl");
    if (!(await launchPreludeAvailable()))
      throw new Error("this Perl spawner does not apply launch preludes");
    for (let i = 0; i < 5; i++)
      for (const mode of ["prelude", "launcher"] as const) await runOnce(driver, base, mode);
    const samples: Record<Mode, number[]> = { prelude: [], launcher: [] };
    for (let round = 0; round < rounds; round++) {
      for (const mode of round % 2 === 0
        ? (["launcher", "prelude"] as const)
        : (["prelude", "launcher"] as const))
        samples[mode].push(await series(driver, base, mode, runs));
    }
    const execs = process.argv.includes("--execs")
      ? {
          launcher: await execsPerRun(driver, base, "launcher", runs),
          prelude: await execsPerRun(driver, base, "prelude", runs),
        }
      : undefined;
    const round2 = (value: number) => Math.round(value * 100) / 100;
    console.log(
      JSON.stringify({
        runs,
        rounds,
        spawnerCpuMsPerRun: {
          launcher: samples.launcher.map(round2),
          prelude: samples.prelude.map(round2),
          medianLauncher: round2(median(samples.launcher)),
          medianPrelude: round2(median(samples.prelude)),
          medianSaving: round2(median(samples.launcher) - median(samples.prelude)),
        },
        execsPerRun: execs,
      }),
    );
  } finally {
    clearInterval(keepAlive);
    await driver.dispose();
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
