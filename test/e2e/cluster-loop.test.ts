import { readFileSync } from "node:fs";
import path from "node:path";
import { applyTransition, getRunJob, listEvents } from "@overseer/db";
import { runGit } from "@overseer/git";
import { runJobId } from "@overseer/queue";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { ClusterFixture, useRunningCluster } from "../support/cluster-fixture.ts";
import { allTasks } from "../support/wait-for.ts";

const fixtures = path.resolve(import.meta.dirname, "../demo/fixtures");
const tasksOf = (file: string) =>
  (YAML.parse(readFileSync(path.join(fixtures, file), "utf8")) as { tasks: unknown[] }).tasks;

describe("cluster loop (coordinator + workers + bwrap + git)", () => {
  const cluster = useRunningCluster({ sandbox: "bwrap" }, 2);

  it("executes, reviews with a fresh agent, and lands approved work on main", async () => {
    const repo = await cluster.addProject({ id: "approve", tasks: tasksOf("approve-project.yaml") });
    const state = await cluster.waitForProject("approve", (s) => allTasks(s, ["done"]));
    expect(state.tasks.size).toBe(2);
    const log = await runGit(["log", "--format=%s%n%b", "main"], { cwd: repo });
    expect(log.stdout).toContain("Add greeting text");
    expect(log.stdout).toContain("Task: S00-001");
    expect(log.stdout).toMatch(/Agent: execute-backend-[0-9a-f]{12}/);
    const greeting = await runGit(["show", "main:src/greeting.txt"], { cwd: repo });
    expect(greeting.stdout).toBe("Hello from Overseer\n");
    const approved = await listEvents(cluster.scratch.db, { projectId: "approve", types: ["task.approved"] });
    expect(approved).toHaveLength(2);
    for (const e of approved) expect(e.data.landedSha).toMatch(/^[0-9a-f]{40}$/);
  });

  it("redoes rejected work with the feedback and unblocks an escalated task through its resolver", async () => {
    const repo = await cluster.addProject({ id: "reject", tasks: tasksOf("reject-escalate-project.yaml") });
    const state = await cluster.waitForProject("reject", (s) => allTasks(s, ["done"]), 60_000);
    expect(state.tasks.get("S00-002.R1")?.kind).toBe("resolver");
    const rejected = await listEvents(cluster.scratch.db, { projectId: "reject", types: ["task.rejected"] });
    expect(rejected.map((e) => e.task_id)).toEqual(["S00-001"]);
    // Only the approved head's tree landed: the rejected attempt is no ancestor of main, and the
    // landed commit carries the worker's trailers and names the reviewed head.
    const submitted = await listEvents(cluster.scratch.db, {
      projectId: "reject",
      types: ["task.submitted"],
    });
    const heads = submitted.filter((e) => e.task_id === "S00-001").map((e) => e.data.branchHead as string);
    expect(heads).toHaveLength(2);
    for (const head of heads) {
      const ancestor = await runGit(["merge-base", "--is-ancestor", head, "main"], {
        cwd: repo,
        okExitCodes: [1],
      });
      expect(ancestor.exitCode, `${head} is an ancestor of main`).toBe(1);
    }
    const landed = await runGit(
      [
        "log",
        "--format=%s|%(trailers:key=Task,valueonly,separator=%x2C)|%(trailers:key=Reviewed-head,valueonly,separator=%x2C)",
        "main",
      ],
      { cwd: repo },
    );
    expect(landed.stdout.split("\n")).toContain(`Add parser test|S00-001|${heads[1]}`);
    expect((await runGit(["log", "--format=%s", "main"], { cwd: repo })).stdout).not.toContain(
      "Add parser\n",
    );
    const unblocked = await listEvents(cluster.scratch.db, {
      projectId: "reject",
      types: ["task.unblocked"],
    });
    expect(unblocked.map((e) => e.task_id)).toEqual(["S00-002"]);
  });

  it("queues the run by id: its job stays in Postgres while the run is live, gone once it ended", async () => {
    const sleeper = ClusterFixture.fakeRunnerConfig({
      argv: ["/bin/sh", "-c", "cat >/dev/null; exec sleep 600"],
      timeout_seconds: 600,
    });
    await cluster.addProject({
      id: "ref-only",
      tasks: [{ id: "S00-001", title: "Sleep", scope: ["**"] }],
      runnerConfig: sleeper,
    });
    const db = cluster.scratch.db;
    let runId: string | undefined;
    for (let i = 0; i < 600 && !runId; i++) {
      const running = await db
        .selectFrom("runs")
        .select("id")
        .where("project_id", "=", "ref-only")
        .where("status", "=", "running")
        .executeTakeFirst();
      runId = running?.id;
      if (!runId) await new Promise((r) => setTimeout(r, 100));
    }
    if (!runId) throw new Error("the run of ref-only never started");
    const queued = await cluster.queues.runs.getJob(runJobId(runId));
    // Stored by id: the job id names the run and the queue the pool (run-contract runByIdSchema).
    expect(queued?.data).toEqual({ v: 1, kind: "run-by-id" });
    // No options of its own (its workers apply the run job policy): its id and BullMQ's default.
    const opts = await cluster.redis.hget(cluster.queues.runs.toKey(runJobId(runId)), "opts");
    expect(JSON.parse(opts ?? "null")).toEqual({ jobId: runJobId(runId), attempts: 0 });
    const stored = (await getRunJob(db, runId)) as { prompt?: string; argv?: string[] } | null;
    expect(stored?.argv).toEqual(["/bin/sh", "-c", "cat >/dev/null; exec sleep 600"]);
    expect(stored?.prompt).toContain("S00-001");
    await applyTransition(db, "ref-only", { kind: "cancel", taskId: "S00-001", by: "operator" });
    expect(await getRunJob(db, runId)).toBeNull();
  });

  it("leaves a decision card pending when the agent needs the user", async () => {
    await cluster.addProject({ id: "decide", tasks: tasksOf("decision-project.yaml") });
    const state = await cluster.waitForProject("decide", (s) =>
      [...s.decisions.values()].some((d) => d.status === "pending"),
    );
    const card = [...state.decisions.values()][0]!;
    expect(card.id).toBe("decision-S00-001.R1");
    expect(card.options.map((o) => o.id)).toEqual(["postgres", "sqlite"]);
    expect(state.tasks.get("S00-001")?.status).toBe("blocked");
    expect(state.tasks.get("S00-001.R1")?.status).toBe("awaiting_input");
  });
});
