/**
 * Postgres restarted with runs in flight (private server, never the shared one): the
 * coordinator process and the worker reconnect, results produced during the outage are
 * applied afterwards, every task completes, and no transition is lost or applied twice.
 */
import { type Db, listEvents } from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { describe, expect, it } from "vitest";
import { scriptedTask, useTestResources } from "../support/cluster-fixture.ts";
import { startPrivatePostgres } from "../support/private-postgres.ts";
import { allTasks, waitFor } from "../support/wait-for.ts";

const running = (s: ProjectState) => [...s.runs.values()].filter((r) => r.status === "running").length;

const resources = useTestResources();

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

    await postgres.stop();
    // A result reaches Redis while Postgres is down (the coordinator cannot apply it yet).
    const resultKeys = [`${cluster.prefix}:results:wait`, `${cluster.prefix}:results:active`];
    await waitFor(
      "a run result queued during the outage",
      async () => {
        for (const key of resultKeys) if ((await cluster!.redis.llen(key)) > 0) return true;
        return (await cluster!.redis.zcard(`${cluster!.prefix}:results:delayed`)) > 0;
      },
      60_000,
    );
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
