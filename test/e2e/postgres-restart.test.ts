/**
 * Postgres restarted with runs in flight (private server, never the shared one): the
 * coordinator process and the worker reconnect, runs whose agents finished during the outage
 * push nothing until Postgres answers their run fence, then finish, every task completes,
 * and no transition is lost or applied twice.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { type Db, listEvents } from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { runGit } from "@overseer/git";
import { describe, expect, it } from "vitest";
import { scriptedTask, useTestResources } from "../support/cluster-fixture.ts";
import { startPrivatePostgres } from "../support/private-postgres.ts";
import { allTasks, waitFor } from "../support/wait-for.ts";

const running = (s: ProjectState) => [...s.runs.values()].filter((r) => r.status === "running").length;

const resources = useTestResources();

/** Runs on the worker whose control dir holds a transition file. */
async function handedIn(dataDir: string): Promise<number> {
  const runs = path.join(dataDir, "runs");
  let n = 0;
  for (const dir of await readdir(runs).catch(() => [])) {
    const control = await readdir(path.join(runs, dir, "control")).catch(() => []);
    if (control.some((f) => f.endsWith(".json") && !f.startsWith("."))) n += 1;
  }
  return n;
}

async function eventCounts(db: Db, projectId: string) {
  const events = await listEvents(db, { projectId, limit: 1000 });
  return (type: string, taskId?: string) =>
    events.filter((e) => e.type === type && (!taskId || e.task_id === taskId)).length;
}

describe("Postgres restart", () => {
  it("with three runs in flight: every task completes once, no transition lost or duplicated", {
    timeout: 240_000,
  }, async () => {
    const postgres = await startPrivatePostgres();
    resources.onRelease(postgres.destroy);
    const cluster = await resources.cluster({ databaseUrl: postgres.url });
    const coordinator = resources.service("coordinator", cluster.env({ OVERSEER_COORDINATOR_ID: "c1" }));
    await cluster.startWorker(3);
    const ids = ["S00-001", "S00-002", "S00-003"];
    await cluster.addProject({
      id: "pgrestart",
      concurrency: 3,
      tasks: ids.map((id, i) =>
        scriptedTask(id, `execute: write src/${i}.txt "${i}"; sleep 2; submit "Add ${i}"`),
      ),
    });
    const { db } = cluster.scratch;
    await cluster.waitForProject("pgrestart", (s) => running(s) === 3, 120_000);

    const repo = (
      await db.selectFrom("projects").select("repo").where("id", "=", "pgrestart").executeTakeFirst()
    )?.repo as string;
    await postgres.stop();
    // Every agent hands its work in during the outage; without Postgres's word nothing is pushed.
    await waitFor(
      "the three agents to hand in their work",
      async () => (await handedIn(cluster.dataDir)) === 3,
      60_000,
    );
    const { stdout } = await runGit(["for-each-ref", "refs/heads/overseer/"], { cwd: repo });
    expect(stdout.trim()).toBe("");
    await postgres.start();

    const state = await cluster.waitForProject("pgrestart", (s) => allTasks(s, ["done"]), 180_000);
    expect(allTasks(state, ["done"])).toBe(true);
    const runs = await db
      .selectFrom("runs")
      .select(["status"])
      .where("project_id", "=", "pgrestart")
      .execute();
    expect(runs.filter((r) => r.status !== "finished")).toEqual([]);
    expect(runs).toHaveLength(2 * ids.length);
    const count = await eventCounts(db, "pgrestart");
    expect(count("run.queued")).toBe(2 * ids.length);
    for (const id of ids) {
      expect(count("task.submitted", id), `${id} submitted`).toBe(1);
      expect(count("task.approved", id), `${id} approved`).toBe(1);
      expect(count("run.finished", id), `${id} runs finished`).toBe(2);
    }
    // The coordinator process lived through it (no restart of the service).
    expect(coordinator.child.exitCode).toBeNull();
  });
});
