/**
 * Limits inside the worker containers (infra/README.md, "Limits inside the worker container"):
 * a fork bomb and a memory hog run as tasks of a project on the compose workers. Each run fails
 * with its limit named (pids_max, memory_mb: the run's own cgroup, delegated by the entrypoint),
 * the worker containers survive (running, not restarted, not OOM-killed), and the next task of
 * the project lands through them.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import {
  api,
  bareRepo,
  cli,
  compose,
  docker,
  IMAGE_USER,
  progress,
  REPOS,
  sh,
  sql,
} from "./deploy-support.ts";

const PROJECT = "limits";
const PIDS_MAX = 64;
const MEMORY_MB = 256;

/**
 * The project's "agent": BOMB starts the classic shell fork bomb and leaves it running for 8 s
 * before exiting 1; HOG fills memory until it is killed; any other task is the fake harness.
 */
const AGENT = `import { spawn } from "node:child_process";
const task = process.env.OVERSEER_TASK_ID;
if (task === "BOMB") {
  spawn("/bin/sh", ["-c", "b() { b | b & }; b"], { stdio: "ignore" });
  setTimeout(() => { console.log("fork bomb ran for 8 s"); process.exit(1); }, 8000);
} else if (task === "HOG") {
  const chunks = [];
  for (;;) chunks.push(Buffer.alloc(32 << 20, 1));
} else {
  await import("/opt/overseer/dist/bin/fake-harness.mjs");
}
`;

interface WorkerState {
  id: string;
  running: boolean;
  restarts: number;
  oomKilled: boolean;
}

async function workerStates(): Promise<WorkerState[]> {
  const ids = (await compose(["ps", "-q", "worker"])).split("\n").filter(Boolean);
  const states: WorkerState[] = [];
  for (const id of ids) {
    const inspect = JSON.parse(await docker(["inspect", "--format", "{{json .}}", id])) as {
      RestartCount: number;
      State: { Running: boolean; OOMKilled: boolean };
    };
    states.push({
      id: id.slice(0, 12),
      running: inspect.State.Running,
      restarts: inspect.RestartCount,
      oomKilled: inspect.State.OOMKilled,
    });
  }
  return states;
}

async function registerLimitsProject(scratch: string): Promise<void> {
  const repo = await bareRepo(scratch, PROJECT);
  const agentDir = path.join(REPOS, "limits-agent");
  await mkdir(agentDir, { recursive: true });
  await writeFile(path.join(agentDir, "agent.mjs"), AGENT);
  const config = path.join(REPOS, "limits-runner.json");
  await writeFile(
    config,
    JSON.stringify({
      argv: ["/usr/local/bin/node", path.join(agentDir, "agent.mjs")],
      timeout_seconds: 120,
      attempts: 1,
      retry_backoff_seconds: 0.5,
      concurrency: 2,
      sandbox: { pids_max: PIDS_MAX, memory_mb: MEMORY_MB, read_only_paths: [agentDir] },
    }),
  );
  await sh("chown", ["-R", IMAGE_USER, agentDir, config]);
  await cli(["init", "--project", PROJECT, "--repo", repo, "--config", config, "--objective", "Limits"]);
}

async function failedRun(taskId: string): Promise<string> {
  return waitFor(
    `the ${taskId} run to fail`,
    async () => {
      const [row] = await sql<{ status: string; failure: string | null }>(
        "SELECT status, failure FROM runs WHERE project_id = $1 AND task_id = $2 AND action = 'execute' ORDER BY created_at LIMIT 1",
        [PROJECT, taskId],
      );
      return row && row.status !== "running" && row.status !== "queued"
        ? `${row.status}: ${row.failure}`
        : undefined;
    },
    180_000,
    500,
  );
}

export async function containedRuns(scratch: string): Promise<void> {
  const before = await workerStates();
  await registerLimitsProject(scratch);
  const task = (id: string, prerequisites: string[] = []) => ({
    id,
    title: `Task ${id}`,
    role: "backend",
    scope: ["src/**"],
    prerequisites,
    body: `\`\`\`overseer-fake\nexecute: write src/${id}.txt "ok"; submit "Add ${id}"\n\`\`\`\n`,
  });
  await api("POST", `/api/v1/projects/${PROJECT}/tasks/import`, [task("BOMB"), task("HOG")]);
  await api("POST", `/api/v1/projects/${PROJECT}/resume`, {});
  progress(
    `project ${PROJECT}: a fork bomb and a memory hog as tasks (pids_max ${PIDS_MAX}, memory_mb ${MEMORY_MB})`,
  );

  const bomb = await failedRun("BOMB");
  expect(bomb).toMatch(
    new RegExp(
      `^failed: .*the run hit its sandbox limits \\(pids_max ${PIDS_MAX} reached: \\d+ forks refused`,
    ),
  );
  progress(`fork bomb contained: ${bomb.split("\n")[0]}`);
  const hog = await failedRun("HOG");
  expect(hog).toMatch(
    new RegExp(`^failed: .*memory_mb ${MEMORY_MB} reached: \\d+ process(es)? killed out of memory`),
  );
  progress(`memory hog contained: ${hog.split("\n")[0]}`);

  const after = await workerStates();
  expect(after).toEqual(before);
  expect(after.every((w) => w.running && !w.oomKilled)).toBe(true);
  progress(
    `worker containers unharmed: ${after.map((w) => `${w.id} running, ${w.restarts} restarts`).join("; ")}`,
  );

  // The next job of the project runs on the same workers (resumed if the failures paused it).
  await api("POST", `/api/v1/projects/${PROJECT}/tasks/import`, [task("NEXT")]);
  await api("POST", `/api/v1/projects/${PROJECT}/resume`, {});
  await waitFor(
    "task NEXT done after the bomb and the hog",
    async () => {
      const [row] = await sql<{ status: string }>(
        "SELECT status FROM tasks WHERE project_id = $1 AND id = 'NEXT'",
        [PROJECT],
      );
      return row?.status === "done" ? row : undefined;
    },
    180_000,
    1000,
  );
  const [next] = await sql<{ worker_id: string }>(
    "SELECT worker_id FROM runs WHERE project_id = $1 AND task_id = 'NEXT' AND action = 'execute' AND status = 'finished'",
    [PROJECT],
  );
  expect(before.map((w) => w.id)).toContain(next?.worker_id.split("-")[1]);
  progress(`the next task ran on worker ${next?.worker_id} and landed`);
}
