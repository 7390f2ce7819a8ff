import { listEvents, requireProject } from "@overseer/db";
import { runGit } from "@overseer/git";
import { startMission, TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { useRunningCluster } from "../support/cluster-fixture.ts";

/**
 * A mission end to end with the fake harness (coordinator + workers + bwrap + git): the
 * objective's script makes the first planner propose an invalid graph (its problems come
 * back as feedback), then a 3-task plan; an independent reviewer approves it, the tasks run
 * and land, continuation adds a second stage, the third planner declares the objective met,
 * and a fresh reviewer's approval ends the project `completed` with the evidence stored.
 */
const OBJECTIVE = [
  "Ship a greeting library in two stages.",
  "",
  "```overseer-fake",
  'execute@MISSION-R1: plan "tasks: [{id: S01-001, title: Broken, prerequisites: [NOPE-1]}, {id: S01-001, title: Twice}]"',
  "execute#2@MISSION-R1: plan \"tasks: [{id: S01-001, title: Add the greeting, scope: ['src/**']}, {id: S01-002, title: Add the farewell, scope: ['src/**'], prerequisites: [S01-001]}, {id: S01-003, title: Document it, scope: ['docs/**']}]\"",
  "execute@MISSION-R2: plan \"tasks: [{id: S02-001, title: Polish, scope: ['src/**'], prerequisites: [S01-002]}]\"",
  'execute@MISSION-R3: complete "All four tasks are done and landed on main; S01 and S02 notes exist."',
  "```",
].join("\n");

describe("missions (objective → plan → review → run → continue → complete)", () => {
  const cluster = useRunningCluster({ sandbox: "bwrap" }, 2);

  it("plans, runs, continues and completes on an independent approval", async () => {
    const repo = await cluster.addProject({ id: "mission", tasks: [], start: false });
    const applier = new TransitionApplier({
      db: cluster.scratch.db,
      live: cluster.live,
      queues: cluster.queues,
    });
    await startMission(applier, "mission", { objective: OBJECTIVE, stage: "S01", maxRounds: 5, by: "test" });

    const state = await cluster.waitForProject("mission", (s) => s.project.status === "completed", 180_000);
    expect(state.project.mission).toMatchObject({
      round: 3,
      evidence: "All four tasks are done and landed on main; S01 and S02 notes exist.",
    });
    expect(state.tasks.get("S01-002")?.prerequisites).toEqual(["S01-001"]);
    for (const id of ["MISSION-R1", "MISSION-R2", "MISSION-R3", "S01-001", "S01-002", "S01-003", "S02-001"]) {
      expect(state.tasks.get(id)?.status).toBe("done");
    }

    // The invalid graph came back with every problem listed, and nothing was imported from it.
    const invalid = await listEvents(cluster.scratch.db, {
      projectId: "mission",
      types: ["mission.plan_invalid"],
    });
    expect(invalid).toHaveLength(1);
    const problems = ((invalid[0]?.data.problems ?? []) as string[]).join("\n");
    expect(problems).toMatch(/S01-001/);
    expect(problems).toMatch(/NOPE-1/);

    // Each plan and the completion were approved by a reviewer other than their planner.
    const approved = await listEvents(cluster.scratch.db, { projectId: "mission", types: ["task.approved"] });
    for (const e of approved.filter((a) => String(a.task_id).startsWith("MISSION-"))) {
      const run = await cluster.scratch.db
        .selectFrom("runs")
        .select("agent_id")
        .where("id", "=", e.run_id as string)
        .executeTakeFirstOrThrow();
      expect(run.agent_id).toMatch(/^review-planner-/);
      expect(run.agent_id).not.toBe(e.data.executorAgentId);
    }
    const kinds = (await listEvents(cluster.scratch.db, { projectId: "mission" })).map((e) => e.type);
    expect(kinds.filter((k) => k === "mission.planned")).toHaveLength(2);
    expect(kinds).toContain("mission.continued");
    expect(kinds).toContain("mission.completed");

    // The planned work landed on main.
    const tree = await runGit(["ls-tree", "-r", "--name-only", "main"], { cwd: repo });
    for (const id of ["S01-001", "S01-002", "S01-003", "S02-001"])
      expect(tree.stdout).toContain(`.overseer/notes/${id}.md`);

    const row = await requireProject(cluster.scratch.db, "mission");
    expect(row.status).toBe("completed");
    expect(row.continuous).toBe(false);
  });
});
