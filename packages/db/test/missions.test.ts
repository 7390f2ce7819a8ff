import type { Command } from "@overseer/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyTransition,
  createProject,
  createScratchDatabase,
  getTask,
  loadProjectState,
  requireProject,
  type ScratchDatabase,
} from "../src/index.ts";

let scratch: ScratchDatabase;

beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

const card = (id: string, prerequisites: string[] = []) => ({
  id,
  stage: "S01",
  title: `Task ${id}`,
  body: "",
  role: "backend",
  scope: ["src/**"],
  prerequisites,
  acceptance: ["tested"],
  priority: 0,
});

async function claimRun(projectId: string, taskId: string): Promise<string> {
  const claimed = await applyTransition(scratch.db, projectId, { kind: "claim" });
  const run = claimed.changes.runs.find((r) => r.taskId === taskId);
  if (!run) throw new Error(`no run claimed for ${taskId}`);
  return run.id;
}

type Proposal = Extract<Command, { kind: "propose" }>["proposal"];

/** The mission's planning task is claimed and its run proposes `proposal`. */
async function proposeFromPlanner(projectId: string, proposal: Proposal): Promise<void> {
  await applyTransition(scratch.db, projectId, {
    kind: "propose",
    runId: await claimRun(projectId, "MISSION-R1"),
    proposal,
    commitSha: null,
    branchHead: null,
    maxAttempts: 3,
  });
}

/** A reviewer run of the planning task approves the proposal (`planApproval` when given). */
async function approveByReviewer(projectId: string, planApproval?: "operator"): Promise<void> {
  await applyTransition(scratch.db, projectId, {
    kind: "approve",
    runId: await claimRun(projectId, "MISSION-R1"),
    landedSha: null,
    landedBranch: null,
    ...(planApproval ? { planApproval } : {}),
  });
}

describe("missions in Postgres", () => {
  it("start, propose, approve: the mission, the proposal and the imported graph persist", async () => {
    await createProject(scratch.db, { id: "m1", repo: "/tmp/none", runnerConfig: {} });
    await applyTransition(scratch.db, "m1", {
      kind: "start-mission",
      objective: "A parser with tests",
      stage: "S01",
      sessionsLimit: 20,
      maxRounds: 4,
      budgetUsd: 2.5,
      by: "operator",
    });
    const row = await requireProject(scratch.db, "m1");
    expect(row).toMatchObject({
      status: "active",
      continuous: true,
      budget_usd: 2.5,
      objective: "A parser with tests",
    });
    expect(row.mission).toMatchObject({
      objective: "A parser with tests",
      round: 1,
      maxRounds: 4,
      evidence: null,
    });

    await proposeFromPlanner("m1", { kind: "plan", tasks: [card("S01-1"), card("S01-2", ["S01-1"])] });
    expect((await getTask(scratch.db, "m1", "MISSION-R1"))?.proposal).toEqual({
      kind: "plan",
      tasks: [card("S01-1"), card("S01-2", ["S01-1"])],
    });

    await approveByReviewer("m1");
    const state = await loadProjectState(scratch.db, "m1");
    expect(state.tasks.get("MISSION-R1")?.status).toBe("done");
    expect(state.tasks.get("S01-2")).toMatchObject({
      status: "todo",
      prerequisites: ["S01-1"],
      kind: "work",
    });
    expect(state.project.mission?.round).toBe(1);
  });

  it("an approved completion stores the evidence and ends the project completed", async () => {
    await createProject(scratch.db, { id: "m2", repo: "/tmp/none", runnerConfig: {} });
    await applyTransition(scratch.db, "m2", {
      kind: "start-mission",
      objective: "Nothing left to do",
      stage: null,
      sessionsLimit: null,
      maxRounds: 2,
      by: "operator",
    });
    await proposeFromPlanner("m2", { kind: "complete", evidence: "npm test: 12 passed" });
    await approveByReviewer("m2");
    const row = await requireProject(scratch.db, "m2");
    expect(row.status).toBe("completed");
    expect(row.continuous).toBe(false);
    expect(row.mission).toMatchObject({ evidence: "npm test: 12 passed" });
    expect(row.budget_usd).toBeNull();
  });

  it("a plan card re-asked after a rejection gets the next revision (its resolved card is loaded)", async () => {
    await createProject(scratch.db, { id: "m3", repo: "/tmp/none", runnerConfig: {} });
    await applyTransition(scratch.db, "m3", {
      kind: "start-mission",
      objective: "Operator-approved plans",
      stage: "S01",
      sessionsLimit: null,
      maxRounds: 4,
      by: "operator",
    });
    const reviewedPlan = async (cards: ReturnType<typeof card>[]) => {
      await proposeFromPlanner("m3", { kind: "plan", tasks: cards });
      await approveByReviewer("m3", "operator");
    };
    await reviewedPlan([card("S01-001"), card("S01-002")]);
    let state = await loadProjectState(scratch.db, "m3");
    expect(state.decisions.get("decision-MISSION-R1")).toMatchObject({ status: "pending", revision: 1 });
    await applyTransition(scratch.db, "m3", {
      kind: "resolve-decision",
      decisionId: "decision-MISSION-R1",
      optionId: "reject_plan",
      note: "smaller",
      by: "operator",
      resolutionId: "res-m3-1",
    });
    await reviewedPlan([card("S01-010")]);
    state = await loadProjectState(scratch.db, "m3");
    const decision = state.decisions.get("decision-MISSION-R1");
    expect(decision).toMatchObject({ status: "pending", revision: 2, selectedOption: null });
    expect(decision?.evidence.map((e) => e.label)).toEqual(["S01-010: Task S01-010"]);
    await applyTransition(scratch.db, "m3", {
      kind: "resolve-decision",
      decisionId: "decision-MISSION-R1",
      optionId: "approve_plan",
      by: "operator",
      resolutionId: "res-m3-2",
    });
    expect((await getTask(scratch.db, "m3", "S01-010"))?.status).toBe("todo");
    expect(await getTask(scratch.db, "m3", "S01-001")).toBeUndefined();
  });
});
