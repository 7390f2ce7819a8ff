/**
 * The run's phase timeline end to end (README "Watching runs"): a real coordinator and worker
 * (bwrap, git, Postgres, Redis) execute and review a task with both hooks configured; the
 * gateway's run resource answers each run's phases, which follow each other without gaps and
 * add up to the run's duration as Postgres recorded it (created_at → ended_at).
 */
import { createApiToken, listRuns } from "@overseer/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { type ServiceProcess, startService } from "../support/service-process.ts";
import { allTasks } from "../support/wait-for.ts";

interface Phase {
  name: string;
  started_at: string;
  duration_ms: number;
}

describe("run phase timeline", () => {
  const cluster = new ClusterFixture({ sandbox: "bwrap" });
  let gateway: ServiceProcess;
  let base = "";
  let token = "";

  beforeAll(async () => {
    await cluster.setup();
    await cluster.startCoordinator();
    await cluster.startWorker(2);
    gateway = startService("gateway", cluster.env({ OVERSEER_GATEWAY_PORT: "0", LOG_LEVEL: "info" }));
    const deadline = Date.now() + 60_000;
    while (!/"port":(\d+)/.test(gateway.output())) {
      if (Date.now() > deadline) throw new Error(`gateway did not start:\n${gateway.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    base = `http://127.0.0.1:${/"port":(\d+)/.exec(gateway.output())?.[1]}`;
    token = (await createApiToken(cluster.scratch.db, { name: "reader", scope: "read" })).token;
  });
  afterAll(async () => {
    await gateway?.kill("SIGTERM");
    await cluster.teardown();
  });

  it("each run's phases are back to back and add up to created_at → ended_at within 2 %", async () => {
    await cluster.addProject({
      id: "timeline",
      tasks: [
        scriptedTask(
          "S00-001",
          'execute: sleep 0.3; write src/a.txt "a\\n"; submit "Add a"\nreview: approve "fine"',
        ),
      ],
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        hooks: {
          setup: { argv: ["sh", "-c", "sleep 0.2"], timeout_seconds: 30 },
          after_run: { argv: ["true"], timeout_seconds: 30 },
        },
      }),
    });
    await cluster.waitForProject("timeline", (s) => allTasks(s, ["done"]), 90_000);
    const rows = await listRuns(cluster.scratch.db, { projectId: "timeline" });
    expect(rows.map((r) => r.action).sort()).toEqual(["execute", "review"]);

    for (const row of rows) {
      const res = await fetch(`${base}/api/v1/runs/${row.id}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      const run = (await res.json()) as {
        action: string;
        created_at: string;
        ended_at: string;
        phases: Phase[];
      };
      const names = run.phases.map((p) => p.name).filter((n) => n !== "fetch");
      expect(names, run.action).toEqual(
        run.action === "execute"
          ? [
              "queue_wait",
              "checkout",
              "sandbox",
              "setup_hook",
              "agent",
              "after_run_hook",
              "scope_check",
              "commit",
              "push",
              "result_applied",
            ]
          : [
              "queue_wait",
              "checkout",
              "sandbox",
              "setup_hook",
              "agent",
              "after_run_hook",
              "scope_check",
              "land",
              "result_applied",
            ],
      );
      for (let i = 1; i < run.phases.length; i++) {
        const before = run.phases[i - 1] as Phase;
        const phase = run.phases[i] as Phase;
        const gap = Date.parse(phase.started_at) - (Date.parse(before.started_at) + before.duration_ms);
        expect(Math.abs(gap), `${before.name} → ${phase.name}`).toBeLessThanOrEqual(1);
      }
      const duration = Date.parse(run.ended_at) - Date.parse(run.created_at);
      const total = run.phases.reduce((sum, p) => sum + p.duration_ms, 0);
      expect(
        Math.abs(total - duration),
        `${run.action}: phases ${total} ms, run ${duration} ms`,
      ).toBeLessThanOrEqual(Math.max(0.02 * duration, 5));
      expect(Date.parse((run.phases[0] as Phase).started_at)).toBe(Date.parse(run.created_at));
    }
  });
});
