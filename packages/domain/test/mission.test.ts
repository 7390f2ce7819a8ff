/**
 * Mission rules against the pure state machine: start, planning proposals (valid, invalid,
 * refused at approval), atomic import, continuation and its bounds, completion only with an
 * independent approval and nothing pending, replan, and `stop` ending the continuation.
 */
import { describe, expect, it } from "vitest";
import { DomainError, type ProjectState, STOP_OPTION_ID } from "../src/index.ts";
import { planCard, propose, review, startedMission, startMission } from "./support/mission-builder.ts";
import {
  activeRunOf,
  buildState,
  claimFor,
  createDriver,
  type Driver,
  getTask,
  task,
  toDone,
} from "./support/state-builder.ts";

describe("start-mission", () => {
  it("makes the project active and continuous with a planning task for the objective", () => {
    const d = createDriver();
    const result = d.step(buildState({ project: { status: "paused" } }), startMission({ sessionsLimit: 5 }));
    const s = result.state;
    expect(s.project).toMatchObject({
      status: "active",
      continuous: true,
      sessionsLimit: 5,
      sessionsUsed: 0,
    });
    expect(s.project.mission).toMatchObject({
      objective: "Ship the parser",
      stage: "S01",
      round: 1,
      maxRounds: 3,
    });
    const planning = getTask(s, "MISSION-R1");
    expect(planning).toMatchObject({ kind: "plan", role: "planner", status: "todo", stage: "S01" });
    expect(result.events.map((e) => e.type)).toContain("mission.started");
  });

  it("refuses an empty objective and a second mission while one is planning", () => {
    const d = createDriver();
    expect(() => d.apply(buildState(), startMission({ objective: "  " }))).toThrow(DomainError);
    const s = startedMission(d);
    expect(() => d.apply(s, startMission())).toThrow(/MISSION-R1 is still todo/);
  });
});

describe("propose", () => {
  it("a valid plan goes to review with the proposal kept", () => {
    const d = createDriver();
    const r = propose(d, startedMission(d), "MISSION-R1", {
      kind: "plan",
      tasks: [planCard("S01-1"), planCard("S01-2", ["S01-1"])],
    });
    const planning = getTask(r.state, "MISSION-R1");
    expect(planning.status).toBe("review");
    expect(planning.proposal).toEqual({
      kind: "plan",
      tasks: [planCard("S01-1"), planCard("S01-2", ["S01-1"])],
    });
    expect(r.state.tasks.has("S01-1")).toBe(false);
  });

  it("an invalid plan returns to a new planning run with every problem listed", () => {
    const d = createDriver();
    const s = startedMission(d, {}, { tasks: [task("S00-1", { status: "done" })] });
    const r = propose(d, s, "MISSION-R1", {
      kind: "plan",
      tasks: [planCard("S00-1"), planCard("S01-2", ["NOPE"]), planCard("S01-2")],
    });
    const planning = getTask(r.state, "MISSION-R1");
    expect(planning.status).toBe("todo");
    expect(planning.failures).toBe(1);
    expect(planning.feedback).toContain("S00-1 is already taken");
    expect(planning.feedback).toContain("S01-2 appears twice");
    expect(planning.feedback).toContain("prerequisites that do not exist: NOPE");
    expect([...r.state.tasks.keys()].sort()).toEqual(["MISSION-R1", "S00-1"]);
    expect(r.events.map((e) => e.type)).toContain("mission.plan_invalid");
  });

  it("validator problems count as failures; the last allowed attempt escalates", () => {
    const d = createDriver();
    let s = startedMission(d);
    for (let attempt = 1; attempt <= 3; attempt++) {
      s = propose(d, s, "MISSION-R1", { kind: "problems", problems: [`problem ${attempt}`] }).state;
    }
    expect(getTask(s, "MISSION-R1").status).toBe("blocked");
  });

  it("only a planning task may propose", () => {
    const d = createDriver();
    const s = buildState({ tasks: [task("S00-1")] });
    const claimed = claimFor(d, s, "S00-1");
    expect(() =>
      d.apply(claimed.state, {
        kind: "propose",
        runId: claimed.run.id,
        proposal: { kind: "complete", evidence: "done" },
        commitSha: null,
        branchHead: null,
        maxAttempts: 3,
      }),
    ).toThrow(/only a mission's planning task/);
  });
});

describe("approve of a plan: imported as one whole, or not at all", () => {
  it("imports every card and finishes the planning task", () => {
    const d = createDriver();
    const proposed = propose(d, startedMission(d), "MISSION-R1", {
      kind: "plan",
      tasks: [planCard("S01-1"), planCard("S01-2", ["S01-1"])],
    });
    const r = review(d, proposed.state, "MISSION-R1");
    expect(getTask(r.state, "MISSION-R1").status).toBe("done");
    expect(getTask(r.state, "S01-2")).toMatchObject({
      status: "todo",
      prerequisites: ["S01-1"],
      role: "backend",
    });
    expect(r.events.map((e) => e.type)).toContain("mission.planned");
  });

  it("imports nothing when an id was taken meanwhile; the planner gets the reason", () => {
    const d = createDriver();
    const proposed = propose(d, startedMission(d), "MISSION-R1", {
      kind: "plan",
      tasks: [planCard("S01-1"), planCard("S01-2")],
    });
    const taken = {
      ...proposed.state,
      tasks: new Map([...proposed.state.tasks, ["S01-2", task("S01-2")]]),
    };
    const r = review(d, taken, "MISSION-R1");
    expect(r.state.tasks.has("S01-1")).toBe(false);
    expect(getTask(r.state, "MISSION-R1")).toMatchObject({ status: "todo", proposal: null });
    expect(getTask(r.state, "MISSION-R1").feedback).toContain("S01-2 is already taken");
  });

  it("a reject sends the planner back without importing", () => {
    const d = createDriver();
    const proposed = propose(d, startedMission(d), "MISSION-R1", {
      kind: "plan",
      tasks: [planCard("S01-1")],
    });
    const r = review(d, proposed.state, "MISSION-R1", "reject");
    expect(r.state.tasks.has("S01-1")).toBe(false);
    expect(getTask(r.state, "MISSION-R1").status).toBe("todo");
  });
});

describe("continuation", () => {
  function planned(d: Driver, maxRounds = 3): ProjectState {
    const proposed = propose(d, startedMission(d, { maxRounds }), "MISSION-R1", {
      kind: "plan",
      tasks: [planCard("S01-1")],
    });
    return review(d, proposed.state, "MISSION-R1").state;
  }

  it("adds the next planning round once every task is done", () => {
    const d = createDriver();
    const s = toDone(d, planned(d), "S01-1");
    const next = d.step(s, { kind: "claim" });
    expect(getTask(next.state, "MISSION-R2")).toMatchObject({ kind: "plan", status: "in_progress" });
    expect(next.state.project.mission?.round).toBe(2);
    expect(next.events.map((e) => e.type)).toContain("mission.continued");
  });

  it("pauses with a summary at the round limit", () => {
    const d = createDriver();
    const s = toDone(d, planned(d, 1), "S01-1");
    const next = d.step(s, { kind: "claim" });
    expect(next.state.project.status).toBe("paused");
    expect(next.state.project.statusReason).toContain("mission round limit (1) reached");
    expect(next.state.tasks.has("MISSION-R2")).toBe(false);
    expect(next.events.find((e) => e.type === "mission.bound_reached")?.data).toMatchObject({
      summary: { done: 2 },
    });
  });

  it("a stop decision ends the mission: no continuation", () => {
    const d = createDriver();
    let s = planned(d);
    const claimed = claimFor(d, s, "S01-1");
    s = d.apply(claimed.state, {
      kind: "escalate",
      runId: claimed.run.id,
      reason: "which database?",
      needsUser: true,
      question: "Which database?",
    });
    const resolver = [...s.tasks.values()].find((t) => t.kind === "resolver");
    expect(resolver?.status).toBe("awaiting_input");
    s = d.apply(s, {
      kind: "resolve-decision",
      decisionId: `decision-${resolver?.id}`,
      optionId: STOP_OPTION_ID,
      by: "operator",
      resolutionId: "res-1",
    });
    expect(s.project.continuous).toBe(false);
    const next = d.step(s, { kind: "claim" });
    expect([...next.state.tasks.values()].filter((t) => t.kind === "plan")).toHaveLength(1);
  });

  it("escalate --replan cancels the task and opens a planning round with the reason", () => {
    const d = createDriver();
    const s = planned(d);
    const claimed = claimFor(d, s, "S01-1");
    const r = d.step(claimed.state, {
      kind: "escalate",
      runId: claimed.run.id,
      reason: "the plan missed the schema",
      replan: true,
    });
    expect(getTask(r.state, "S01-1").status).toBe("cancelled");
    expect(getTask(r.state, "MISSION-R2").feedback).toContain("the plan missed the schema");
    expect([...r.state.tasks.values()].some((t) => t.kind === "resolver")).toBe(false);
  });
});

describe("completion", () => {
  function completing(d: Driver, input = {}) {
    return propose(d, startedMission(d, {}, input), "MISSION-R1", {
      kind: "complete",
      evidence: "all tests pass: 42 passed",
    });
  }

  it("an independent reviewer's approval completes the project with the evidence", () => {
    const d = createDriver();
    const proposed = completing(d);
    const planner = getTask(proposed.state, "MISSION-R1").executorAgentId;
    const claimed = claimFor(d, proposed.state, "MISSION-R1");
    expect(claimed.run.agentId).not.toBe(planner);
    const r = d.step(claimed.state, {
      kind: "approve",
      runId: claimed.run.id,
      landedSha: null,
      landedBranch: null,
    });
    expect(r.state.project).toMatchObject({ status: "completed", continuous: false });
    expect(r.state.project.mission).toMatchObject({ evidence: "all tests pass: 42 passed" });
    expect(r.events.map((e) => e.type)).toContain("mission.completed");
    expect(d.step(r.state, { kind: "claim" }).state.tasks.size).toBe(1);
  });

  it("the planner cannot approve its own completion", () => {
    const d = createDriver();
    const proposed = completing(d);
    const claimed = claimFor(d, proposed.state, "MISSION-R1");
    const planner = getTask(proposed.state, "MISSION-R1").executorAgentId as string;
    const forged = {
      ...claimed.state,
      runs: new Map(
        [...claimed.state.runs].map(([id, r]) => [
          id,
          r.taskId === "MISSION-R1" ? { ...r, agentId: planner } : r,
        ]),
      ),
    };
    const run = activeRunOf(forged, "MISSION-R1");
    expect(() =>
      d.apply(forged, { kind: "approve", runId: run.id, landedSha: null, landedBranch: null }),
    ).toThrow(/fresh reviewer/);
  });

  it("is refused while a task is open or a decision pending", () => {
    const d = createDriver();
    const proposed = completing(d, { tasks: [task("S00-9", { status: "blocked", blockedBy: null })] });
    const r = review(d, proposed.state, "MISSION-R1");
    expect(r.state.project.status).toBe("active");
    expect(getTask(r.state, "MISSION-R1").status).toBe("todo");
    expect(getTask(r.state, "MISSION-R1").feedback).toContain("task S00-9 is still blocked");
    expect(r.events.map((e) => e.type)).toContain("mission.completion_refused");
  });
});
