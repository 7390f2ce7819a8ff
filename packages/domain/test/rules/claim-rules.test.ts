/**
 * Rules 1, 11 and 13: what a claim (the scheduler's tick) runs, how many at once, and the dry run.
 * The flow rules of docs/state-machine.md, one `describe` per rule, against the pure state
 * machine (the handlers in src/transitions/). Each test builds a small project, drives it with
 * commands and checks the resulting state, events, incidents and decision cards.
 */
import { describe, expect, it } from "vitest";
import { claimChangesNothing, firstRunnable, runnableTasks } from "../../src/index.ts";
import { ids } from "../support/rule-helpers.ts";
import {
  activeRunOf,
  activeRuns,
  buildState,
  claimFor,
  createDriver,
  getTask,
  runsOf,
  START_MS,
  task,
  toBlocked,
  toDone,
} from "../support/state-builder.ts";

describe("rule 1: ready = todo, prerequisites done, project active, requested stage; resolvers, priority, stage, id", () => {
  it("claims a todo task only once every prerequisite is done", () => {
    const d = createDriver();
    let s = buildState({ tasks: [task("S00-1"), task("S00-2", { prerequisites: ["S00-1"], priority: 9 })] });
    expect(ids(runnableTasks(s, d.ctx.now))).toEqual(["S00-1"]);
    s = toDone(d, s, "S00-1");
    expect(ids(runnableTasks(s, d.ctx.now))).toEqual(["S00-2"]);
    const claimed = claimFor(d, s, "S00-2");
    expect(getTask(claimed.state, "S00-2").status).toBe("in_progress");
  });

  it("a prerequisite in review, blocked or cancelled is not done", () => {
    const d = createDriver();
    for (const status of ["review", "blocked", "cancelled", "in_progress", "awaiting_input"] as const) {
      const s = buildState({ tasks: [task("A", { status }), task("B", { prerequisites: ["A"] })] });
      expect(runnableTasks(s, d.ctx.now).some((t) => t.id === "B")).toBe(false);
    }
  });

  it("an unknown prerequisite never counts as done", () => {
    const s = buildState({ tasks: [task("B", { prerequisites: ["missing"] })] });
    expect(runnableTasks(s, START_MS)).toEqual([]);
  });

  it("claims nothing while the project is paused or stopped", () => {
    const d = createDriver();
    for (const status of ["paused", "stopped"] as const) {
      const s = buildState({ project: { status }, tasks: [task("A")] });
      const result = d.step(s, { kind: "claim" });
      expect(result.changes.runs).toEqual([]);
      expect(getTask(result.state, "A").status).toBe("todo");
      expect(firstRunnable(s, d.ctx.now)).toBeNull();
    }
  });

  it("respects the requested stage from the command or from the project's start", () => {
    const d = createDriver();
    const tasks = [task("S00-1", { stage: "S00", priority: 5 }), task("S01-1", { stage: "S01" })];
    const byCommand = d.apply(buildState({ tasks }), { kind: "claim", stage: "S01" });
    expect(activeRuns(byCommand).map((r) => r.taskId)).toEqual(["S01-1"]);
    const byProject = d.apply(buildState({ project: { stage: "S01" }, tasks }), { kind: "claim" });
    expect(activeRuns(byProject).map((r) => r.taskId)).toEqual(["S01-1"]);
    const everyStage = d.apply(buildState({ tasks }), { kind: "claim" });
    expect(activeRuns(everyStage).map((r) => r.taskId)).toEqual(["S00-1"]);
  });

  it("orders resolvers first, then priority (higher first), then stage, then id in natural order", () => {
    const s = buildState({
      tasks: [
        task("S00-10"),
        task("S00-2"),
        task("S01-1", { stage: "S01" }),
        task("S02-1", { stage: "S02", priority: 3 }),
        task("S00-9", { priority: 3 }),
        task("S03-1.R1", {
          stage: "S03",
          kind: "resolver",
          parentId: "X",
          rootId: "X",
          depth: 1,
          priority: -5,
        }),
      ],
    });
    expect(ids(runnableTasks(s, START_MS))).toEqual([
      "S03-1.R1",
      "S00-9",
      "S02-1",
      "S00-2",
      "S00-10",
      "S01-1",
    ]);
  });

  it("claims in scheduling order up to the free slots", () => {
    const d = createDriver();
    const s = buildState({
      project: { concurrency: 2 },
      tasks: [task("S00-10"), task("S00-2"), task("S00-3", { priority: -1 })],
    });
    const next = d.apply(s, { kind: "claim" });
    expect(
      activeRuns(next)
        .map((r) => r.taskId)
        .sort(),
    ).toEqual(["S00-10", "S00-2"]);
    expect(getTask(next, "S00-3").status).toBe("todo");
  });

  it("never claims a task with a pending decision card, a retry backoff in force, or an active run", () => {
    const d = createDriver();
    let s = buildState({ tasks: [task("A", { notBefore: START_MS + 1000 })] });
    expect(firstRunnable(s, START_MS)).toBeNull();
    expect(firstRunnable(s, START_MS + 1000)?.id).toBe("A");

    s = buildState({ project: { concurrency: 5 }, tasks: [task("A")] });
    s = d.apply(s, { kind: "claim" });
    s = d.apply(s, { kind: "claim" });
    expect(runsOf(s, "A")).toHaveLength(1);

    // A card for a todo task (asked while it was todo) keeps it out of the schedule.
    const withCard = buildState({
      tasks: [task("A")],
      decisions: [
        {
          id: "decision-A",
          projectId: "demo",
          itemId: "A",
          revision: 1,
          status: "pending",
          title: "t",
          reason: "r",
          question: "q",
          evidence: [],
          options: [],
          optionsSource: "none",
          selectedOption: null,
          note: null,
          resolutionId: null,
          resolvedBy: null,
          createdAt: START_MS,
          resolvedAt: null,
        },
      ],
    });
    expect(firstRunnable(withCard, START_MS)).toBeNull();
  });

  it("never claims blocked, awaiting_input, in_progress, done or cancelled tasks", () => {
    const d = createDriver();
    const s = buildState({
      project: { concurrency: 9 },
      tasks: (["blocked", "awaiting_input", "in_progress", "done", "cancelled"] as const).map((status) =>
        task(`T-${status}`, { status }),
      ),
    });
    expect(d.step(s, { kind: "claim" }).changes.runs).toEqual([]);
  });
});

describe("rule 11: per-project concurrency (the Postgres lease is tested in @overseer/db)", () => {
  it("defaults to one run at a time", () => {
    const d = createDriver();
    let s = buildState({ tasks: [task("A"), task("B"), task("C")] });
    expect(s.project.concurrency).toBe(1);
    s = d.apply(s, { kind: "claim" });
    expect(activeRuns(s)).toHaveLength(1);
    s = d.apply(s, { kind: "claim" });
    expect(activeRuns(s)).toHaveLength(1);
    const run = activeRunOf(s, "A");
    s = d.apply(s, { kind: "submit", runId: run.id, message: "m", commitSha: null, branchHead: null });
    s = d.apply(s, { kind: "claim" });
    // The review of A runs before new work starts, still one at a time.
    expect(activeRuns(s).map((r) => [r.taskId, r.action])).toEqual([["A", "review"]]);
  });

  it("runs up to N at once when configured, counting runs already active", () => {
    const d = createDriver();
    let s = buildState({
      project: { concurrency: 3 },
      tasks: ["A", "B", "C", "D", "E"].map((id) => task(id)),
    });
    s = d.apply(s, { kind: "claim" });
    expect(activeRuns(s).map((r) => r.taskId)).toEqual(["A", "B", "C"]);
    s = d.apply(s, { kind: "claim" });
    expect(activeRuns(s)).toHaveLength(3);
    s = d.apply(s, { kind: "cancel", taskId: "B", by: "op" });
    s = d.apply(s, { kind: "claim" });
    expect(
      activeRuns(s)
        .map((r) => r.taskId)
        .sort(),
    ).toEqual(["A", "C", "D"]);
  });
});

describe("rule 13: dry run shows the first runnable task and changes nothing", () => {
  it("returns the first task in scheduling order", () => {
    const s = buildState({
      tasks: [
        task("S01-1", { stage: "S01", priority: 1 }),
        task("S00-10", { priority: 1 }),
        task("S00-2", { priority: 1 }),
        task("S00-1", { priority: 0 }),
      ],
    });
    expect(firstRunnable(s, START_MS)?.id).toBe("S00-2");
    expect(firstRunnable(s, START_MS, "S01")?.id).toBe("S01-1");
    expect(firstRunnable(s, START_MS, "S09")).toBeNull();
    expect(firstRunnable(s, START_MS)?.id).toBe(runnableTasks(s, START_MS)[0]?.id);
  });

  it("assigns nothing and needs no context: the state is deep-equal before and after", () => {
    const d = createDriver();
    const blocked = toBlocked(
      d,
      buildState({ project: { concurrency: 2 }, tasks: [task("A"), task("B")] }),
      "A",
    );
    const s = blocked.state;
    const before = structuredClone(s);
    const first = firstRunnable(s, d.ctx.now);
    expect(first?.id).toBe(blocked.resolverId);
    expect(s).toEqual(before);
    expect(activeRuns(s)).toEqual(activeRuns(before));
  });
});

describe("the coordinator's pass gate: a claim's dry run on a known state (claimChangesNothing)", () => {
  it("is true when nothing is runnable or no slot is free", () => {
    expect(
      claimChangesNothing(
        buildState({ tasks: [task("A", { status: "done" })] }),
        { kind: "claim" },
        START_MS,
      ),
    ).toBe(true);
    const d = createDriver();
    const busy = claimFor(d, buildState({ tasks: [task("A"), task("B")] }), "A").state;
    expect(claimChangesNothing(busy, { kind: "claim" }, START_MS)).toBe(true);
  });

  it("is false when it would claim, and ends when it would claim several runs of one role at once", () => {
    const s = buildState({ project: { concurrency: 3 }, tasks: [task("A"), task("B"), task("C")] });
    expect(claimChangesNothing(s, { kind: "claim" }, START_MS)).toBe(false);
    expect(claimChangesNothing(buildState({ tasks: [task("A")] }), { kind: "claim" }, START_MS)).toBe(false);
  });
});
