/**
 * The deployed cluster, driven from outside like an operator would (`npm run test:deploy`;
 * scripts/test-deploy.sh builds the image and brings up docker-compose.yml with two workers
 * before this runs, and removes everything afterwards).
 *
 * - The first admin token comes from the documented one-off container
 *   (`compose exec gateway node dist/overseer.js token create`), the project is registered
 *   the same way (`overseer init`) on a bare repository bind-mounted into the containers.
 * - Tasks are imported and the project resumed through the gateway's HTTP API.
 * - A worker container holding a run is SIGKILLed (`docker kill -s KILL`); later, with runs in
 *   flight again, the Postgres container is restarted.
 * - Every task ends done, each with exactly one submit and one approve transition, no run
 *   transition recorded twice, and exactly one landed commit per task on main.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import { containedRuns } from "./contained-runs.ts";
import {
  api,
  cli,
  closeDatabase,
  compose,
  containerHealth,
  docker,
  git,
  IMAGE_USER,
  progress,
  REPOS,
  setToken,
  sh,
  sql,
} from "./deploy-support.ts";
import { agentCliAndDoctor } from "./operator-checks.ts";
import { projectImages } from "./project-images.ts";
import { rollingUpdate } from "./rolling-update.ts";

const PROJECT = "deploy";
const REPO = path.join(REPOS, `${PROJECT}.git`);
const FIRST_IDS = ["S00-001", "S00-002", "S00-003", "S00-004", "S00-005", "S00-006"];
/** Wait for every first task, so runs are still in flight when the Postgres restart comes. */
const LATE_IDS = ["S01-001", "S01-002"];
/** After the late ones: a run of these is in flight when a worker container is stopped (drain). */
const DRAIN_IDS = ["S02-001", "S02-002"];
const TASK_IDS = [...FIRST_IDS, ...LATE_IDS, ...DRAIN_IDS];
/** The worker's stop_grace_period in docker-compose.yml (above OVERSEER_WORKER_DRAIN_MS). */
const WORKER_STOP_GRACE_SECONDS = 45;

interface RunningRun {
  id: string;
  task_id: string;
  worker_id: string | null;
}

async function runningRuns(): Promise<RunningRun[]> {
  return sql<RunningRun>(
    "SELECT id, task_id, worker_id FROM runs WHERE project_id = $1 AND status = 'running'",
    [PROJECT],
  );
}

let scratch = "";

beforeAll(async () => {
  scratch = await mkdtemp(path.join(REPOS, "seed-"));
});

afterAll(async () => {
  await closeDatabase();
  await rm(scratch, { recursive: true, force: true });
});

/** The first admin token, from a one-off container of the image; then both workers' heartbeats. */
async function startOperating(): Promise<void> {
  const token =
    (await cli(["token", "create", "--scope", "admin", "--name", "test-deploy"])).trim().split("\n").at(-1) ??
    "";
  expect(token).toMatch(/^ovr_/);
  setToken(token);
  progress("admin token created with `compose exec gateway node dist/overseer.js token create`");

  const ready = await api("GET", "/readyz");
  progress(`gateway /readyz: ${JSON.stringify(ready)}`);
  const workers = await waitFor(
    "both workers' heartbeats",
    async () => {
      const answer = (await api("GET", "/api/v1/workers")) as {
        workers: { id: string; sandbox: string; unsafe: boolean }[];
      };
      return answer.workers.length === 2 ? answer.workers : undefined;
    },
    120_000,
    1000,
  );
  for (const w of workers) {
    expect(w.sandbox).toBe("bwrap");
    expect(w.unsafe).toBe(false);
  }
  progress(
    `workers up with the bwrap sandbox (their startup probe passed): ${workers.map((w) => w.id).join(", ")}`,
  );
}

/** A bare repository the containers reach through the bind mount, registered with `overseer init`; its tasks imported. */
async function registerProject(): Promise<void> {
  const seed = path.join(scratch, "work");
  await git(["init", "-q", "-b", "main", seed]);
  await writeFile(path.join(seed, "README.md"), "# deploy test\n");
  await git(["add", "README.md"], seed);
  await git(
    ["-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-q", "-m", "Initial"],
    seed,
  );
  await git(["clone", "-q", "--bare", seed, REPO]);
  await writeFile(
    path.join(REPOS, "runner.json"),
    JSON.stringify({
      argv: ["/usr/local/bin/node", "/opt/overseer/dist/bin/fake-harness.mjs"],
      timeout_seconds: 300,
      retry_backoff_seconds: 0.5,
      concurrency: 4,
    }),
  );
  await sh("chown", ["-R", IMAGE_USER, REPO, path.join(REPOS, "runner.json")]);
  await cli([
    "init",
    "--project",
    PROJECT,
    "--repo",
    REPO,
    "--config",
    path.join(REPOS, "runner.json"),
    "--objective",
    "Deploy test",
  ]);
  progress(`project registered with \`compose exec gateway node dist/overseer.js init\` (repo ${REPO})`);

  const tasks = TASK_IDS.map((id, i) => ({
    id,
    title: `Task ${id}`,
    role: "backend",
    scope: ["src/**"],
    prerequisites: LATE_IDS.includes(id) ? FIRST_IDS : DRAIN_IDS.includes(id) ? LATE_IDS : [],
    body: `Scripted task.\n\`\`\`overseer-fake\nexecute: write src/${id}.txt "${i}"; sleep 8; submit "Add ${id}"\n\`\`\`\n`,
  }));
  await api("POST", `/api/v1/projects/${PROJECT}/tasks/import`, tasks);
  await api("POST", `/api/v1/projects/${PROJECT}/resume`, {});
  progress(`${tasks.length} tasks imported and the project resumed through the HTTP API`);
}

/** SIGKILL a worker container that holds a running run: the run goes on elsewhere. */
async function killAWorker(): Promise<void> {
  const victim = await waitFor(
    "a run in flight on a worker",
    async () => (await runningRuns()).find((r) => r.worker_id?.startsWith("worker-")),
    300_000,
    250,
  );
  const containerId = (victim.worker_id as string).split("-")[1] as string;
  await docker(["kill", "-s", "KILL", containerId]);
  progress(`SIGKILLed worker container ${containerId} while it ran ${victim.id} (task ${victim.task_id})`);
  await waitFor(
    `run ${victim.id} to be picked up again or finished`,
    async () => {
      const [row] = await sql<{ status: string; worker_id: string | null }>(
        "SELECT status, worker_id FROM runs WHERE id = $1",
        [victim.id],
      );
      return row && (row.status !== "running" || row.worker_id !== victim.worker_id) ? row : undefined;
    },
    300_000,
    500,
  );
  progress(`run ${victim.id} continued on another worker after the kill`);
}

/** Restart the Postgres container while runs are in flight. */
async function restartPostgres(): Promise<void> {
  const pending = await waitFor(
    `a run of ${LATE_IDS.join(" or ")} in flight (they start once the first six are done)`,
    async () => {
      const rows = await runningRuns();
      return rows.some((r) => LATE_IDS.includes(r.task_id)) ? rows : undefined;
    },
    600_000,
    250,
  );
  const postgresId = (await compose(["ps", "-q", "postgres"])).trim();
  await docker(["restart", "-t", "10", postgresId], 120_000);
  progress(`restarted the Postgres container with ${pending.length} run(s) in flight`);
  await waitFor(
    "Postgres healthy again",
    async () => (await containerHealth(postgresId)) === "healthy",
    180_000,
    1000,
  );
}

/**
 * Stop (SIGTERM) a worker container while it runs: it drains, finishing the run within
 * OVERSEER_WORKER_DRAIN_MS, and exits by itself before Docker's SIGKILL. Then every stopped
 * worker container comes back (the drained one; the killed one unless Docker's restart policy did).
 */
async function drainAWorker(): Promise<void> {
  const draining = await waitFor(
    `a run of ${DRAIN_IDS.join(" or ")} in flight on a worker`,
    async () =>
      (await runningRuns()).find((r) => DRAIN_IDS.includes(r.task_id) && r.worker_id?.startsWith("worker-")),
    600_000,
    250,
  );
  const drainedContainer = (draining.worker_id as string).split("-")[1] as string;
  await docker(["stop", "-t", String(WORKER_STOP_GRACE_SECONDS), drainedContainer], 180_000);
  const exit = JSON.parse(await docker(["inspect", "--format", "{{json .State}}", drainedContainer])) as {
    ExitCode: number;
    OOMKilled: boolean;
  };
  expect(exit.ExitCode, "the stopped worker exited by itself (137 would be Docker's SIGKILL)").toBe(0);
  const [drainedRun] = await sql<{ status: string; worker_id: string | null }>(
    "SELECT status, worker_id FROM runs WHERE id = $1",
    [draining.id],
  );
  expect(drainedRun?.worker_id).toBe(draining.worker_id);
  progress(
    `stopped worker container ${drainedContainer} while it ran ${draining.id}: drained, exit code 0, run ${drainedRun?.status}`,
  );
  for (const id of (await compose(["ps", "-q", "worker"])).split("\n").filter(Boolean)) {
    const running = (await docker(["inspect", "--format", "{{.State.Running}}", id])).trim() === "true";
    if (!running) await docker(["start", id]);
  }
}

/** Exactly once, from Postgres (the truth), and one landed commit per task on main with the task's file. */
async function expectExactlyOnce(): Promise<void> {
  const statuses = await sql<{ id: string; status: string }>(
    "SELECT id, status FROM tasks WHERE project_id = $1 ORDER BY id",
    [PROJECT],
  );
  expect(statuses.map((t) => [t.id, t.status])).toEqual(TASK_IDS.map((id) => [id, "done"]));
  const counts = await sql<{ task_id: string; type: string; n: number }>(
    `SELECT task_id, type, count(*)::int AS n FROM events
      WHERE project_id = $1 AND type IN ('task.submitted', 'task.approved')
      GROUP BY task_id, type`,
    [PROJECT],
  );
  for (const id of TASK_IDS) {
    for (const type of ["task.submitted", "task.approved"]) {
      const n = counts.find((c) => c.task_id === id && c.type === type)?.n ?? 0;
      expect(n, `${type} events of ${id}`).toBe(1);
    }
  }
  const duplicated = await sql(
    `SELECT run_id, type, count(*)::int AS n FROM events
      WHERE project_id = $1 AND run_id IS NOT NULL AND type <> 'run.redelivered'
      GROUP BY run_id, type HAVING count(*) > 1`,
    [PROJECT],
  );
  expect(duplicated, "a run transition recorded twice").toEqual([]);
  const unfinished = await sql(
    "SELECT id, status FROM runs WHERE project_id = $1 AND status NOT IN ('finished', 'failed', 'cancelled')",
    [PROJECT],
  );
  expect(unfinished).toEqual([]);

  const log = await git(
    [
      "log",
      "main",
      "--format=%(trailers:key=Task,valueonly,separator=%x2C)|%(trailers:key=Action,valueonly,separator=%x2C)|%s",
    ],
    REPO,
  );
  const lines = log.split("\n");
  for (const id of TASK_IDS) {
    const work = lines.filter((line) => line.startsWith(`${id}|execute|`));
    expect(work, `work commits of ${id} on main`).toHaveLength(1);
    const lands = lines.filter((line) => line.endsWith(`|Land ${id} on main`));
    expect(lands.length, `landing commits of ${id} on main`).toBeLessThanOrEqual(1);
    expect((await git(["show", `main:src/${id}.txt`], REPO)).trim()).toBe(String(TASK_IDS.indexOf(id)));
  }
  progress(
    "exactly once: one submit and one approve per task, no run transition twice, one work commit per task on main",
  );
}

describe("compose cluster (npm run test:deploy)", () => {
  it("lands every task exactly once through a worker SIGKILL and a Postgres restart", {
    timeout: 900_000,
  }, async () => {
    await startOperating();
    await registerProject();
    await killAWorker();
    await restartPostgres();
    await drainAWorker();
    const done = await waitFor(
      "every task done",
      async () => {
        const answer = (await api("GET", `/api/v1/projects/${PROJECT}/tasks`)) as {
          tasks: { id: string; status: string }[];
        };
        return answer.tasks.length === TASK_IDS.length && answer.tasks.every((t) => t.status === "done")
          ? answer.tasks
          : undefined;
      },
      600_000,
      1000,
    );
    progress(`all ${done.length} tasks done`);
    await expectExactlyOnce();
  });

  it(
    "contains a fork bomb and a memory hog run as tasks inside the worker containers",
    { timeout: 600_000 },
    () => containedRuns(scratch),
  );

  it(
    "runs the agent CLI baked in with AGENT_CLIS; doctor --deep in the gateway container exits 0",
    {
      timeout: 300_000,
    },
    () => agentCliAndDoctor(scratch, PROJECT),
  );

  it(
    "runs a Python and a JDK project on their images (sandbox.image) inside the worker containers, under bwrap and under gVisor",
    { timeout: 900_000 },
    () => projectImages(scratch),
  );

  it("replaces every worker one at a time, drained, while runs keep starting", { timeout: 900_000 }, () =>
    rollingUpdate(scratch),
  );
});
