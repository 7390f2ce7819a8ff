/**
 * Failure behaviour with real processes, Postgres, Redis, git and bwrap (issue: cluster loop
 * §5). Each test checks both that the work completes and that nothing happened twice.
 */
import { execFile } from "node:child_process";
import { access, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { type Db, leaseOwners, listEvents } from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask, useTestResources } from "../support/cluster-fixture.ts";
import { startPrivateRedis } from "../support/private-redis.ts";
import { allTasks, waitFor } from "../support/wait-for.ts";

const git = promisify(execFile);

const hasRunning = (s: ProjectState) => [...s.runs.values()].some((r) => r.status === "running");

async function countRows(db: Db, projectId: string) {
  const runs = await db
    .selectFrom("runs")
    .select(["task_id", "action", "status"])
    .where("project_id", "=", projectId)
    .execute();
  const events = await listEvents(db, { projectId, limit: 1000 });
  const count = (type: string, taskId?: string) =>
    events.filter((e) => e.type === type && (!taskId || e.task_id === taskId)).length;
  return { runs, count, events };
}

/** The worker Postgres records for the project's running run, once there is one. */
async function runningOn(db: Db, projectId: string, workerId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("runs")
    .select(["id", "worker_id"])
    .where("project_id", "=", projectId)
    .where("status", "=", "running")
    .where("worker_id", "=", workerId)
    .executeTakeFirst();
  return row?.id;
}

/** Every task was submitted and approved exactly once, and every run finished once. */
async function expectEachTaskDoneOnce(db: Db, projectId: string, taskIds: string[]) {
  const { runs, count } = await countRows(db, projectId);
  expect(runs.filter((r) => r.status !== "finished")).toEqual([]);
  expect(runs).toHaveLength(2 * taskIds.length);
  expect(count("run.queued")).toBe(2 * taskIds.length);
  for (const id of taskIds) {
    expect(count("task.submitted", id), `${id} submitted`).toBe(1);
    expect(count("task.approved", id), `${id} approved`).toBe(1);
    expect(count("run.finished", id), `${id} runs finished`).toBe(2);
  }
}

const resources = useTestResources();

describe("failure behaviour", () => {
  it("a worker SIGKILLed mid-run: the job is redelivered and the task completes with no duplicate transition", async () => {
    const cluster = await resources.cluster();
    await cluster.startCoordinator();
    const first = resources.service("worker", cluster.env({ OVERSEER_WORKER_ID: "doomed" }));
    await cluster.addProject({
      id: "crash",
      tasks: [scriptedTask("S00-001", 'execute: write src/a.txt "a"; sleep 2; submit "Add a"')],
    });
    await cluster.waitForProject("crash", hasRunning, 60_000); // a worker process starting on a loaded machine
    await first.kill("SIGKILL");
    resources.service("worker", cluster.env({ OVERSEER_WORKER_ID: "survivor" }));
    await cluster.waitForProject("crash", (s) => allTasks(s, ["done"]), 60_000);
    const { runs, count, events } = await countRows(cluster.scratch.db, "crash");
    expect(runs.map((r) => `${r.action}:${r.status}`).sort()).toEqual([
      "execute:finished",
      "review:finished",
    ]);
    expect(count("task.submitted")).toBe(1);
    expect(count("task.approved")).toBe(1);
    // Postgres knows the run moved: one redelivery, from the dead worker to the survivor.
    expect(events.filter((e) => e.type === "run.redelivered").map((e) => e.data)).toEqual([
      { workerId: "survivor", previousWorkerId: "doomed" },
    ]);
  }, 120_000);

  it("a worker frozen past its lock (SIGSTOP) and resumed (SIGCONT) after the redo: its late outcome is dropped, nothing twice", async () => {
    const cluster = await resources.cluster();
    await cluster.startCoordinator();
    const frozen = resources.service("worker", cluster.env({ OVERSEER_WORKER_ID: "frozen" }));
    const repo = await cluster.addProject({
      id: "freeze",
      tasks: [scriptedTask("S00-001", 'execute: write src/a.txt "a"; sleep 2; submit "Add a"')],
    });
    const db = cluster.scratch.db;
    await waitFor("the run to start on the frozen worker", () => runningOn(db, "freeze", "frozen"), 60_000);
    // Freeze only once the agent is at work (it wrote its file and sleeps), so the frozen
    // worker holds a finished agent's outcome when it resumes.
    await waitFor(
      "the agent to write its file",
      () => agentWrote(cluster?.dataDir ?? "", "src/a.txt"),
      60_000,
    );
    frozen.child.kill("SIGSTOP");
    // The agent finishes meanwhile; the frozen worker cannot renew its lock, so the run
    // moves to another worker, which redoes it and lands it.
    const survivor = (await cluster.startWorker(1)).id;
    await waitFor("the run to be redelivered", () => runningOn(db, "freeze", survivor), 60_000);
    frozen.child.kill("SIGCONT");
    await waitFor(
      "the resumed worker to drop its late outcome",
      () => frozen.output().includes("run ownership lost"),
      60_000,
    ).catch((error) => {
      throw new Error(`${(error as Error).message}; its log:\n${frozen.output()}`);
    });
    await cluster.waitForProject("freeze", (s) => allTasks(s, ["done"]), 60_000);
    await expectEachTaskDoneOnce(db, "freeze", ["S00-001"]);
    const { runs, events } = await countRows(db, "freeze");
    expect(runs.map((r) => `${r.action}:${r.status}`).sort()).toEqual([
      "execute:finished",
      "review:finished",
    ]);
    const execute = await db
      .selectFrom("runs")
      .select(["worker_id"])
      .where("project_id", "=", "freeze")
      .where("action", "=", "execute")
      .executeTakeFirstOrThrow();
    // The outcome applied is the redo's, never the resumed worker's late one.
    expect(execute.worker_id).toBe(survivor);
    expect(events.filter((e) => e.type === "run.redelivered").map((e) => e.data)).toEqual([
      { workerId: survivor, previousWorkerId: "frozen" },
    ]);
    // One commit of the agent's work reached the task branch (the late worker pushed nothing),
    // and one landed commit carries it on main.
    const { stdout } = await git("git", [
      "--git-dir",
      repo,
      "log",
      "--all",
      "--format=%s|%(trailers:key=Status,valueonly,separator=%x2C)",
    ]);
    const subjects = stdout.split("\n");
    expect(subjects.filter((subject) => subject === "Add a|review")).toHaveLength(1);
    expect(subjects.filter((subject) => subject === "Add a|approved")).toHaveLength(1);
  }, 120_000);

  it("the coordinator killed and restarted: it carries on and nothing is enqueued twice", async () => {
    const cluster = await resources.cluster();
    await cluster.startWorker(2);
    const c1 = resources.service("coordinator", cluster.env({ OVERSEER_COORDINATOR_ID: "c1" }));
    await cluster.addProject({
      id: "restart",
      tasks: [
        scriptedTask("S00-001", 'execute: write src/a.txt "a"; sleep 1.5; submit "Add a"'),
        scriptedTask("S00-002", 'execute: write src/b.txt "b"; submit "Add b"', {
          prerequisites: ["S00-001"],
        }),
      ],
    });
    await cluster.waitForProject("restart", hasRunning);
    await c1.kill("SIGKILL");
    resources.service("coordinator", cluster.env({ OVERSEER_COORDINATOR_ID: "c2" }));
    await cluster.waitForProject("restart", (s) => allTasks(s, ["done"]), 60_000);
    const { runs, count } = await countRows(cluster.scratch.db, "restart");
    expect(runs).toHaveLength(4);
    expect(runs.every((r) => r.status === "finished")).toBe(true);
    expect(count("run.queued")).toBe(4);
    expect(count("task.submitted")).toBe(2);
    expect((await leaseOwners(cluster.scratch.db)).map((l) => l.owner)).toEqual(["c2"]);
  });

  it("Redis FLUSHALL mid-run: queues are rebuilt from Postgres and every task completes", async () => {
    const redis = await startPrivateRedis();
    resources.onRelease(redis.stop);
    const cluster = await resources.cluster({ redisUrl: redis.url });
    await cluster.startCoordinator();
    await cluster.startWorker(2);
    await cluster.addProject({
      id: "flush",
      tasks: [
        scriptedTask("S00-001", 'execute: write src/a.txt "a"; sleep 1.5; submit "Add a"'),
        scriptedTask("S00-002", 'execute: write src/b.txt "b"; submit "Add b"', {
          prerequisites: ["S00-001"],
        }),
      ],
    });
    await cluster.waitForProject("flush", hasRunning);
    await cluster.redis.flushall();
    await cluster.waitForProject("flush", (s) => allTasks(s, ["done"]), 60_000);
    const { count } = await countRows(cluster.scratch.db, "flush");
    expect(count("task.approved")).toBe(2);
    expect(count("task.submitted", "S00-001")).toBe(1);
  });

  it("a harness timeout kills the whole process group and creates a remediation", async () => {
    const cluster = await resources.cluster();
    await cluster.startCoordinator();
    await cluster.startWorker(1);
    const marker = 900_000 + Math.floor(Math.random() * 90_000);
    await cluster.addProject({
      id: "timeout",
      runnerConfig: ClusterFixture.fakeRunnerConfig({ timeout_seconds: 1.5 }),
      tasks: [scriptedTask("S00-001", `execute: spawn-orphan ${marker}; sleep 60; submit "never"`)],
    });
    const state = await cluster.waitForProject("timeout", (s) => s.tasks.has("S00-001.R1"), 60_000);
    expect(state.tasks.get("S00-001")?.status).toBe("blocked");
    expect(state.tasks.get("S00-001")?.statusReason).toMatch(/timed out after/);
    const incidents = await cluster.scratch.db
      .selectFrom("incidents")
      .selectAll()
      .where("project_id", "=", "timeout")
      .execute();
    expect(incidents.map((i) => i.kind)).toContain("timeout");
    // No process of the run survives, not even the orphan that left the process group.
    expect(await processesWithArgument(`sleep ${marker}`)).toEqual([]);
  });

  it("a missing harness leaves the task awaiting input with a message saying what to set", async () => {
    const cluster = await resources.cluster();
    await cluster.startCoordinator();
    await cluster.startWorker(1);
    await cluster.addProject({
      id: "noharness",
      runnerConfig: ClusterFixture.fakeRunnerConfig({ argv: ["/nonexistent/agent-cli", "--go"] }),
      tasks: [scriptedTask("S00-001", 'execute: submit "x"')],
    });
    const state = await cluster.waitForProject("noharness", (s) =>
      [...s.tasks.values()].some((t) => t.status === "awaiting_input"),
    );
    const t = state.tasks.get("S00-001");
    expect(t?.awaitingReason).toBe("harness_not_configured");
    expect(t?.statusReason).toMatch(/agent-cli/);
    expect(t?.statusReason).toMatch(/set "argv"/);
    expect(state.decisions.get("decision-S00-001")?.status).toBe("pending");
  });

  it("max_prompt_chars too small fails with an error naming both sizes", async () => {
    const cluster = await resources.cluster();
    await cluster.startCoordinator();
    await cluster.addProject({
      id: "tiny",
      runnerConfig: ClusterFixture.fakeRunnerConfig({ max_prompt_chars: 100 }),
      tasks: [scriptedTask("S00-001", 'execute: submit "x"')],
    });
    const state = await cluster.waitForProject("tiny", (s) =>
      [...s.tasks.values()].some((t) => t.status === "awaiting_input"),
    );
    const reason = state.tasks.get("S00-001")?.statusReason ?? "";
    expect(reason).toMatch(/prompt needs \d+ chars but max_prompt_chars is 100/);
  });

  it("two coordinators: one owner per project, every task done once", async () => {
    const cluster = await resources.cluster();
    await cluster.startCoordinator("c-a");
    await cluster.startCoordinator("c-b");
    await cluster.startWorker(2);
    const ids = ["p1", "p2", "p3"];
    for (const id of ids)
      await cluster.addProject({
        id,
        tasks: [scriptedTask("S00-001", 'execute: write src/x.txt "x"; submit "x"')],
      });
    for (const id of ids) {
      await cluster.waitForProject(id, (s) => allTasks(s, ["done"]), 60_000);
      const { runs } = await countRows(cluster.scratch.db, id);
      expect(runs).toHaveLength(2);
    }
    const leases = await leaseOwners(cluster.scratch.db);
    expect(new Set(leases.map((l) => l.projectId)).size).toBe(leases.length);
    const owned = cluster.coordinators.flatMap((c) => c.ownedProjects);
    expect(owned.sort()).toEqual(ids);
  });
});

/** Whether a run checkout under the data dir holds `file` (the agent wrote it). */
async function agentWrote(dataDir: string, file: string): Promise<boolean> {
  const runs = await readdir(path.join(dataDir, "runs")).catch(() => [] as string[]);
  for (const run of runs) {
    if (
      await access(path.join(dataDir, "runs", run, "checkout", file)).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}

/** Host processes whose command line contains `needle` (scans /proc). */
async function processesWithArgument(needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.replace(/\0/g, " ").includes(needle)) found.push(Number(entry));
  }
  return found;
}
