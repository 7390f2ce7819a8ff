/**
 * The scale bench's projects: thousands of them, created before any service runs, and started
 * or paused the way an operator does (the `start-project` and `set-project-status` transitions,
 * each with its event and NOTIFY), several at a time.
 *
 * Every project has a bare repository of its own, as in production, but not one made with git
 * each time: one template (`git init` + an initial commit, what `overseer init` needs) is copied
 * file by file (ClusterFixture's `template`). Git would spawn ~8 processes per project, minutes at
 * 5,000 projects on a loaded machine; the copy costs a few files. Its hook samples are left out
 * of the template (git needs none of them).
 */
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import type { loadSettings } from "@overseer/settings";
import { startProject, TransitionApplier } from "@overseer/transitions";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { TRIVIAL_HARNESS } from "./cluster-throughput-bench.ts";

/** How many projects the bench creates, starts or pauses at once (its Postgres connections). */
const PARALLEL = 8;

export interface ProjectSizes {
  projects: number;
  tasksPerProject: number;
  overheadTasks: number;
  warmupTasks: number;
  longRuns: number;
}

/** The warm phase's tasks per project (scale-bench.ts): a few runs in a row on each, as in the others. */
export const WARMUP_TASKS_PER_PROJECT = 5;

/** The warm phase's projects for `tasks` tasks (rounded up to whole projects). */
export function warmupProjects(tasks: number): number {
  return Math.ceil(Math.max(0, tasks) / WARMUP_TASKS_PER_PROJECT);
}

/**
 * The projects of every phase, created paused (no service runs yet): `warm-<n>`, `one-0`,
 * `scale-<n>`, `long-<n>`.
 */
export async function addProjects(
  cluster: ClusterFixture,
  sizes: ProjectSizes,
  log: (line: string) => void,
): Promise<void> {
  const t0 = performance.now();
  const template = await cluster.createRepo("template");
  const hooks = path.join(template, "hooks");
  for (const sample of await readdir(hooks).catch(() => [])) await rm(path.join(hooks, sample));
  const trivial = ClusterFixture.fakeRunnerConfig({ argv: TRIVIAL_HARNESS, timeout_seconds: 120 });
  const sleeper = ClusterFixture.fakeRunnerConfig({
    argv: ["/bin/sh", "-c", "cat >/dev/null; exec sleep 3600"],
    timeout_seconds: 3600,
  });
  const tasks = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: `S00-${String(i + 1).padStart(3, "0")}`,
      title: `Bench task ${i + 1}`,
      scope: ["**"],
    }));
  const specs = [
    ...Array.from({ length: warmupProjects(sizes.warmupTasks) }, (_, p) => ({
      id: `warm-${p}`,
      tasks: tasks(WARMUP_TASKS_PER_PROJECT),
      runnerConfig: trivial,
    })),
    { id: "one-0", tasks: tasks(sizes.overheadTasks), runnerConfig: trivial },
    ...Array.from({ length: sizes.projects }, (_, p) => ({
      id: `scale-${p}`,
      tasks: tasks(sizes.tasksPerProject),
      runnerConfig: trivial,
    })),
    ...Array.from({ length: sizes.longRuns }, (_, p) => ({
      id: `long-${p}`,
      tasks: tasks(1),
      runnerConfig: sleeper,
    })),
  ];
  await inParallel(specs, (spec) => cluster.addProject({ ...spec, template, start: false }));
  log(`scale: ${specs.length} projects created in ${Math.round(performance.now() - t0)} ms`);
}

/** Starts the given projects (the `start-project` transition, as `overseer start` does). */
export async function startProjects(cluster: ClusterFixture, ids: readonly string[]): Promise<void> {
  const applier = new TransitionApplier({ db: cluster.scratch.db });
  await inParallel(ids, (id) => startProject(applier, id, { by: "scale-bench" }));
}

/** Pauses the given projects (the `set-project-status` transition, as `overseer pause` does). */
export async function pauseProjects(cluster: ClusterFixture, ids: readonly string[]): Promise<void> {
  const applier = new TransitionApplier({ db: cluster.scratch.db });
  await inParallel(ids, (id) =>
    applier.apply(id, { kind: "set-project-status", status: "paused", by: "scale-bench", reason: "bench" }),
  );
}

/** The ids `<prefix><0..n-1>`. */
export function projectIds(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, p) => `${prefix}${p}`);
}

async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, lane));
}

/** The services' environment: the production timings, not the test fixture's short ones. */
export function serviceEnv(
  cluster: ClusterFixture,
  options: { workerConcurrency: number },
  defaults: ReturnType<typeof loadSettings>,
): Record<string, string> {
  return cluster.env({
    LOG_LEVEL: "warn",
    OVERSEER_WORKER_CONCURRENCY: String(options.workerConcurrency),
    OVERSEER_HEARTBEAT_INTERVAL_MS: String(defaults.heartbeatIntervalMs),
    OVERSEER_WORKER_LOCK_MS: String(defaults.workerLockMs),
    OVERSEER_WORKER_LOCK_RENEW_MS: String(defaults.workerLockRenewMs),
    OVERSEER_STALLED_INTERVAL_MS: String(defaults.stalledIntervalMs),
    OVERSEER_KILL_GRACE_MS: "500",
    // The sleeping runs are handed back at once when the bench stops the workers.
    OVERSEER_WORKER_DRAIN_MS: "500",
    // Passed through to the services when set: `OVERSEER_PROCESS_SPAWNER=0` compares with git
    // forked from the workers, `OVERSEER_PROCESS_SPAWNER_PROGRAM=node` with the Node spawner
    // (rather than Perl), `OVERSEER_RUN_NICE=0` with the runs' processes at the services'
    // priority, `OVERSEER_WORKER_NICE=0` with the workers' own at the gateway's, and `GIT_TRACE2_EVENT=/tmp/dir` writes one trace file per git process the services
    // start (git writes one per process into a directory), to count them per run.
    ...Object.fromEntries(
      [
        "OVERSEER_PROCESS_SPAWNER",
        "OVERSEER_PROCESS_SPAWNER_PROGRAM",
        "OVERSEER_RUN_NICE",
        "OVERSEER_WORKER_NICE",
        "GIT_TRACE2_EVENT",
      ].flatMap((name) => {
        const value = process.env[name];
        return value ? [[name, value]] : [];
      }),
    ),
  });
}

export function roleUrl(cluster: ClusterFixture, role: string): string {
  const url = new URL(cluster.scratch.url);
  url.username = role;
  return url.toString();
}
