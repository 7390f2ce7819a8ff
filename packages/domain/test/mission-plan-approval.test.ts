/**
 * Plan approval by the operator (`plan_approval: operator`) and the mission summary every
 * surface shows: the reviewed plan waits on a decision card with the proposed graph; the
 * operator's approve imports it whole (or, if it no longer fits, nothing), a rejection sends
 * the feedback back to the planner; bounds are recorded so the summary can tell a bound pause.
 */
import { describe, expect, it } from "vitest";
import {
  APPROVE_PLAN_OPTION_ID,
  type Command,
  CUSTOM_OPTION_ID,
  DomainError,
  type MissionSummaryInput,
  missionNotice,
  missionSummaryLines,
  type PlanCard,
  type ProjectState,
  REJECT_PLAN_OPTION_ID,
  summarizeMission,
} from "../src/index.ts";
import { planCard, propose, review, startedMission } from "./support/mission-builder.ts";
import { buildState, claimFor, createDriver, type Driver, getTask, toDone } from "./support/state-builder.ts";

/** Planner proposes `cards`, a fresh reviewer approves with `plan_approval: operator`. */
function reviewedPlan(d: Driver, s: ProjectState, cards: PlanCard[]) {
  const proposed = propose(d, s, "MISSION-R1", { kind: "plan", tasks: cards });
  const review = claimFor(d, proposed.state, "MISSION-R1");
  return d.step(review.state, {
    kind: "approve",
    runId: review.run.id,
    landedSha: null,
    landedBranch: null,
    feedback: "small and testable",
    planApproval: "operator",
  });
}

const resolve = (optionId: string, note?: string): Command => ({
  kind: "resolve-decision",
  decisionId: "decision-MISSION-R1",
  optionId,
  note,
  by: "alice",
  resolutionId: `res-${optionId}`,
});

describe("plan_approval: operator", () => {
  it("a reviewed plan becomes a decision card with the proposed graph; nothing is imported yet", () => {
    const d = createDriver();
    const r = reviewedPlan(d, startedMission(d), [planCard("S01-1"), planCard("S01-2", ["S01-1"])]);
    expect(getTask(r.state, "MISSION-R1")).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "plan_approval",
    });
    expect(r.state.tasks.has("S01-1")).toBe(false);
    const decision = r.state.decisions.get("decision-MISSION-R1");
    expect(decision?.status).toBe("pending");
    expect(decision?.options.map((o) => o.id)).toEqual([
      APPROVE_PLAN_OPTION_ID,
      REJECT_PLAN_OPTION_ID,
      "stop",
    ]);
    expect(decision?.evidence.map((e) => e.label)).toEqual(["S01-1: Planned S01-1", "S01-2: Planned S01-2"]);
    expect(decision?.evidence[1]?.summary).toContain("after S01-1");
    expect(r.events.map((e) => e.type)).toContain("mission.plan_awaiting_approval");
    // A continuous claim starts no other round while the plan waits.
    const claimed = d.step(r.state, { kind: "claim" });
    expect([...claimed.state.tasks.values()].filter((t) => t.kind === "plan")).toHaveLength(1);
  });

  it("the operator's approve imports every task at once and finishes the planning task", () => {
    const d = createDriver();
    const waiting = reviewedPlan(d, startedMission(d), [
      planCard("S01-1"),
      planCard("S01-2", ["S01-1"]),
    ]).state;
    const r = d.step(waiting, resolve(APPROVE_PLAN_OPTION_ID));
    expect(getTask(r.state, "MISSION-R1").status).toBe("done");
    expect(getTask(r.state, "S01-2")).toMatchObject({ status: "todo", prerequisites: ["S01-1"] });
    expect(r.events.find((e) => e.type === "mission.planned")?.data).toEqual({ taskIds: ["S01-1", "S01-2"] });
    expect(r.events.find((e) => e.type === "task.approved")?.data).toMatchObject({ approvedBy: "alice" });
    // Resolving again with the same option is a no-op.
    expect(d.step(r.state, resolve(APPROVE_PLAN_OPTION_ID)).outcome).toBe("already_applied");
  });

  it("imports nothing when an id was taken meanwhile; the planner gets the reason", () => {
    const d = createDriver();
    const waiting = reviewedPlan(d, startedMission(d), [planCard("S01-1"), planCard("S01-2")]).state;
    const taken = d.apply(waiting, {
      kind: "import-tasks",
      by: "bob",
      tasks: [planCard("S01-2")],
    });
    const r = d.step(taken, resolve(APPROVE_PLAN_OPTION_ID));
    expect(r.state.tasks.has("S01-1")).toBe(false);
    expect(getTask(r.state, "MISSION-R1")).toMatchObject({ status: "todo", proposal: null });
    expect(getTask(r.state, "MISSION-R1").feedback).toContain("S01-2 is already taken");
  });

  it("a rejection needs feedback and sends it to a new planning run; nothing is imported", () => {
    const d = createDriver();
    const waiting = reviewedPlan(d, startedMission(d), [planCard("S01-1")]).state;
    expect(() => d.apply(waiting, resolve(REJECT_PLAN_OPTION_ID))).toThrow(DomainError);
    const r = d.step(waiting, resolve(REJECT_PLAN_OPTION_ID, "split S01-1 into parser and tests"));
    const planning = getTask(r.state, "MISSION-R1");
    expect(planning).toMatchObject({ status: "todo", proposal: null, awaitingReason: null });
    expect(planning.feedback).toContain("split S01-1 into parser and tests");
    expect(r.state.tasks.has("S01-1")).toBe(false);
    expect(r.events.map((e) => e.type)).toContain("mission.plan_rejected");
    // The next planning run is a new agent.
    const again = claimFor(d, r.state, "MISSION-R1");
    expect(again.run.action).toBe("execute");
  });

  it("free text (custom option or an answer) is rejection feedback too", () => {
    const d = createDriver();
    const waiting = reviewedPlan(d, startedMission(d), [planCard("S01-1")]).state;
    const custom = d.apply(waiting, resolve(CUSTOM_OPTION_ID, "add a migration task"));
    expect(getTask(custom, "MISSION-R1").feedback).toContain("add a migration task");
    const answered = d.apply(waiting, { kind: "answer", taskId: "MISSION-R1", text: "too big", by: "bob" });
    expect(getTask(answered, "MISSION-R1")).toMatchObject({ status: "todo", proposal: null });
    expect(answered.tasks.has("S01-1")).toBe(false);
  });

  it("with the default (reviewer) the reviewer's approve imports the plan", () => {
    const d = createDriver();
    const proposed = propose(d, startedMission(d), "MISSION-R1", {
      kind: "plan",
      tasks: [planCard("S01-1")],
    });
    const r = review(d, proposed.state, "MISSION-R1").state;
    expect(getTask(r, "S01-1").status).toBe("todo");
    expect(r.decisions.size).toBe(0);
  });
});

describe("bounds of a mission are recorded", () => {
  it("max_sessions and a budget pause record mission.bound_reached with the status reason", () => {
    const d = createDriver();
    const proposed = propose(d, startedMission(d, { sessionsLimit: 1 }), "MISSION-R1", {
      kind: "plan",
      tasks: [planCard("S01-1")],
    });
    const exhausted = d.step(proposed.state, { kind: "claim" });
    expect(exhausted.state.project.status).toBe("paused");
    const bound = exhausted.events.find((e) => e.type === "mission.bound_reached");
    expect(bound?.data).toMatchObject({ bound: "sessions", reason: exhausted.state.project.statusReason });

    const budget = d.step(startedMission(d), {
      kind: "set-project-status",
      status: "paused",
      by: "coordinator",
      reason: "budget_usd 1 reached (spent 1.2000)",
      bound: "budget",
    });
    expect(budget.state.project.statusReason).toContain("budget_usd 1 reached");
    expect(budget.events.find((e) => e.type === "mission.bound_reached")?.data).toMatchObject({
      bound: "budget",
      reason: budget.state.project.statusReason,
    });
  });

  it("a budget pause of a project without an open mission is an ordinary pause", () => {
    const d = createDriver();
    const r = d.step(buildState(), {
      kind: "set-project-status",
      status: "paused",
      by: "coordinator",
      reason: "budget_usd 1 reached",
      bound: "budget",
    });
    expect(r.state.project.statusReason).toBe("budget_usd 1 reached");
    expect(r.events.map((e) => e.type)).not.toContain("mission.bound_reached");
  });
});

describe("summarizeMission", () => {
  const base: MissionSummaryInput = {
    mission: {
      objective: "Ship it",
      stage: "S01",
      round: 2,
      maxRounds: 3,
      evidence: null,
      completedAt: null,
    },
    projectStatus: "active",
    statusReason: null,
    counts: { done: 3, todo: 1 },
    spend: {
      costUsd: 1.5,
      tokensUnpriced: 0,
      budgetUsd: 10,
      tokensIn: 1000,
      tokensCached: 400,
      tokensOut: 200,
      sessionsUsed: 7,
      sessionsLimit: 20,
    },
    lastApproved: { taskId: "S01-3", title: "Tests", summary: "parser covered by 12 tests", at: 1000 },
    lastBound: null,
  };

  it("running: counts with zeros and total, the last approved summary as evidence", () => {
    const s = summarizeMission(base);
    expect(s.state).toBe("running");
    expect(s.tasks).toMatchObject({ done: 3, todo: 1, in_progress: 0, total: 4 });
    expect(s.evidence).toEqual({
      kind: "stage_summary",
      text: "parser covered by 12 tests",
      taskId: "S01-3",
      at: 1000,
    });
    expect(missionSummaryLines(s).join("\n")).toContain("round 2 of 3, stage S01; running");
    expect(missionNotice(s)).toBeNull();
  });

  it("paused_by_bound only while the bound's reason is still the status reason", () => {
    const lastBound = { bound: "budget" as const, reason: "budget_usd 10 reached", at: 2000 };
    const paused = summarizeMission({
      ...base,
      projectStatus: "paused",
      statusReason: lastBound.reason,
      lastBound,
    });
    expect(paused.state).toBe("paused_by_bound");
    expect(paused.bound).toEqual(lastBound);
    expect(missionSummaryLines(paused).join("\n")).toContain(
      "paused by the budget bound: budget_usd 10 reached",
    );
    expect(missionNotice(paused)).toBe("mission paused at the budget bound: budget_usd 10 reached");
    const byOperator = summarizeMission({
      ...base,
      projectStatus: "paused",
      statusReason: "set by bob",
      lastBound,
    });
    expect(byOperator).toMatchObject({ state: "paused", bound: null });
    const resumed = summarizeMission({ ...base, projectStatus: "active", statusReason: null, lastBound });
    expect(resumed).toMatchObject({ state: "running", bound: null });
  });

  it("completed: the approved completion evidence wins", () => {
    const s = summarizeMission({
      ...base,
      projectStatus: "completed",
      mission: { ...base.mission, evidence: "42 passed", completedAt: 3000 },
    });
    expect(s.state).toBe("completed");
    expect(s.evidence).toEqual({ kind: "completion", text: "42 passed", taskId: null, at: 3000 });
    expect(missionNotice(s)).toBe("mission completed: 42 passed");
  });
});

it("tasks of a plan the operator approved run like any other", () => {
  const d = createDriver();
  const waiting = reviewedPlan(d, startedMission(d), [planCard("S01-1")]).state;
  const approved = d.apply(waiting, resolve(APPROVE_PLAN_OPTION_ID));
  expect(getTask(toDone(d, approved, "S01-1"), "S01-1").status).toBe("done");
});
