/**
 * Rolling worker update (scripts/rolling-update.sh, infra/README.md "Rolling worker updates")
 * while a project's runs keep coming: every worker container is replaced one at a time, each old
 * one drained; a healthy worker exists at every moment, runs start during the update, and every
 * task lands. The longest stretch without a run start during the update is printed (a figure,
 * not asserted).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import {
  api,
  bareRepo,
  COMPOSE,
  cli,
  compose,
  containerHealth,
  IMAGE_USER,
  progress,
  REPOS,
  sh,
  sql,
} from "./deploy-support.ts";

const PROJECT = "rolling";
const TASK_IDS = Array.from({ length: 16 }, (_, i) => `R${String(i + 1).padStart(2, "0")}`);

async function healthyWorkers(): Promise<string[]> {
  const ids = (await compose(["ps", "-q", "worker"])).split("\n").filter(Boolean);
  const healthy: string[] = [];
  for (const id of ids) {
    if ((await containerHealth(id).catch(() => "gone")) === "healthy") healthy.push(id);
  }
  return healthy;
}

export async function rollingUpdate(scratch: string): Promise<void> {
  const repo = await bareRepo(scratch, PROJECT);
  const config = path.join(REPOS, "rolling-runner.json");
  await writeFile(
    config,
    JSON.stringify({
      argv: ["/usr/local/bin/node", "/opt/overseer/dist/bin/fake-harness.mjs"],
      timeout_seconds: 300,
      retry_backoff_seconds: 0.5,
      concurrency: 4,
    }),
  );
  await sh("chown", [IMAGE_USER, config]);
  await cli(["init", "--project", PROJECT, "--repo", repo, "--config", config, "--objective", "Rolling"]);
  await api(
    "POST",
    `/api/v1/projects/${PROJECT}/tasks/import`,
    TASK_IDS.map((id) => ({
      id,
      title: `Task ${id}`,
      role: "backend",
      scope: ["src/**"],
      body: `\`\`\`overseer-fake\nexecute: write src/${id}.txt "${id}"; sleep 3; submit "Add ${id}"\n\`\`\`\n`,
    })),
  );
  await api("POST", `/api/v1/projects/${PROJECT}/resume`, {});
  await waitFor(
    "a run of the rolling project in flight",
    async () => (await sql("SELECT id FROM runs WHERE project_id = $1 AND status = 'running'", [PROJECT]))[0],
    120_000,
    250,
  );
  const old = await healthyWorkers();

  // At least one healthy worker at every poll while the script replaces them all.
  let fewest = old.length;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      fewest = Math.min(fewest, (await healthyWorkers()).length);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const began = new Date();
  process.env.COMPOSE = COMPOSE.join(" "); // the script's compose command (the test's project and files)
  const output = await sh("bash", ["scripts/rolling-update.sh"], 600_000).finally(() => {
    polling = false;
  });
  await poller;
  const ended = new Date();
  progress(
    `rolling update in ${Math.round((ended.getTime() - began.getTime()) / 1000)} s:\n${output.trim()}`,
  );
  expect(fewest, "healthy workers at the worst moment of the update").toBeGreaterThanOrEqual(1);
  const now = await healthyWorkers();
  expect(now).toHaveLength(old.length);
  for (const id of old) expect(now).not.toContain(id);

  const starts = (
    await sql<{ started_at: Date }>(
      "SELECT started_at FROM runs WHERE project_id = $1 AND started_at BETWEEN $2 AND $3 ORDER BY started_at",
      [PROJECT, began, ended],
    )
  ).map((r) => r.started_at.getTime());
  expect(starts.length, "runs started during the update").toBeGreaterThan(0);
  const edges = [began.getTime(), ...starts, ended.getTime()];
  const gap = Math.max(...edges.slice(1).map((t, i) => t - (edges[i] as number)));
  progress(
    `during the update: ${starts.length} runs started, fewest healthy workers ${fewest}, longest stretch without a run start ${(gap / 1000).toFixed(1)} s`,
  );

  await waitFor(
    "every rolling task done",
    async () => {
      const rows = await sql<{ status: string }>("SELECT status FROM tasks WHERE project_id = $1", [PROJECT]);
      return rows.length === TASK_IDS.length && rows.every((r) => r.status === "done") ? rows : undefined;
    },
    300_000,
    1000,
  );
  progress(`all ${TASK_IDS.length} rolling tasks done on the new workers`);
}
