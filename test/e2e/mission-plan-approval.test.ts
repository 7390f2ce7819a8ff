import { randomUUID } from "node:crypto";
import { listEvents, loadMissionSummaryInput, requireProject } from "@overseer/db";
import { APPROVE_PLAN_OPTION_ID, REJECT_PLAN_OPTION_ID, summarizeMission } from "@overseer/domain";
import { startMission, TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { ClusterFixture, useRunningCluster } from "../support/cluster-fixture.ts";

/**
 * `plan_approval: operator` end to end with the fake harness (coordinator + worker + bwrap +
 * git): the reviewer approves the first plan, which then waits on a "Needs you" card with the
 * proposed graph; the operator rejects it with feedback, which reaches the next planning run;
 * the second plan is approved by the reviewer and then by the operator, imported whole, run,
 * and the next round's planner declares the objective met.
 */
const OBJECTIVE = [
  "Ship a greeting.",
  "",
  "```overseer-fake",
  "execute@MISSION-R1: plan \"tasks: [{id: S01-001, title: Add the greeting, scope: ['src/**']}, {id: S01-002, title: Translate it, scope: ['src/**'], prerequisites: [S01-001]}]\"",
  "execute#2@MISSION-R1: plan \"tasks: [{id: S01-010, title: Add the greeting only, scope: ['src/**']}]\"",
  'execute@MISSION-R2: complete "S01-010 landed on main with its note."',
  "```",
].join("\n");

describe("missions with plan_approval: operator", () => {
  const cluster = useRunningCluster({ sandbox: "bwrap" }, 1);

  it("needs the operator's approval of each reviewed plan; a rejection goes back to the planner", async () => {
    await cluster.addProject({
      id: "approval",
      tasks: [],
      start: false,
      runnerConfig: ClusterFixture.fakeRunnerConfig({ plan_approval: "operator" }),
    });
    const applier = new TransitionApplier({
      db: cluster.scratch.db,
      live: cluster.live,
      queues: cluster.queues,
    });
    await startMission(applier, "approval", { objective: OBJECTIVE, stage: "S01", maxRounds: 4, by: "test" });
    const db = cluster.scratch.db;
    const waitingPlan = (revision: number) =>
      cluster.waitForProject(
        "approval",
        (s) =>
          s.decisions.get("decision-MISSION-R1")?.revision === revision &&
          s.decisions.get("decision-MISSION-R1")?.status === "pending",
        100_000,
      );

    // The reviewed first plan waits for the operator with the proposed graph; nothing imported.
    const first = await waitingPlan(1);
    expect(first.tasks.get("MISSION-R1")).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "plan_approval",
    });
    expect(first.tasks.has("S01-001")).toBe(false);
    const card = first.decisions.get("decision-MISSION-R1");
    expect(card?.evidence.map((e) => e.label)).toEqual([
      "S01-001: Add the greeting",
      "S01-002: Translate it",
    ]);
    expect(card?.options.map((o) => o.id)).toEqual([APPROVE_PLAN_OPTION_ID, REJECT_PLAN_OPTION_ID, "stop"]);

    await applier.apply("approval", {
      kind: "resolve-decision",
      decisionId: "decision-MISSION-R1",
      optionId: REJECT_PLAN_OPTION_ID,
      note: "One task is enough for now.",
      by: "operator",
      resolutionId: randomUUID(),
    });

    // The second planning run read the feedback; its plan waits on the card's next revision.
    const second = await waitingPlan(2);
    expect(second.tasks.has("S01-001")).toBe(false);
    expect(second.decisions.get("decision-MISSION-R1")?.evidence.map((e) => e.label)).toEqual([
      "S01-010: Add the greeting only",
    ]);
    const prompts = await db
      .selectFrom("runs")
      .select(["prompt"])
      .where("project_id", "=", "approval")
      .where("task_id", "=", "MISSION-R1")
      .where("action", "=", "execute")
      .orderBy("created_at", "asc")
      .execute();
    expect(prompts).toHaveLength(2);
    expect(prompts[1]?.prompt).toContain("One task is enough for now.");

    await applier.apply("approval", {
      kind: "resolve-decision",
      decisionId: "decision-MISSION-R1",
      optionId: APPROVE_PLAN_OPTION_ID,
      by: "operator",
      resolutionId: randomUUID(),
    });
    const done = await cluster.waitForProject("approval", (s) => s.project.status === "completed", 100_000);
    expect(done.tasks.get("S01-010")?.status).toBe("done");
    expect([...done.tasks.keys()].filter((id) => id.startsWith("S01-"))).toEqual(["S01-010"]);

    const kinds = (await listEvents(db, { projectId: "approval" })).map((e) => e.type);
    expect(kinds.filter((k) => k === "mission.plan_awaiting_approval")).toHaveLength(2);
    expect(kinds.filter((k) => k === "mission.plan_rejected")).toHaveLength(1);
    expect(kinds.filter((k) => k === "mission.planned")).toHaveLength(1);
    expect(kinds).toContain("mission.completed");

    // The one mission summary: completed, with the approved completion evidence.
    const input = await loadMissionSummaryInput(db, await requireProject(db, "approval"));
    const summary = input && summarizeMission(input);
    expect(summary).toMatchObject({
      state: "completed",
      round: 2,
      evidence: { kind: "completion", text: "S01-010 landed on main with its note." },
    });
    expect(summary?.tasks).toMatchObject({ done: 3, total: 3 });
  });
});
