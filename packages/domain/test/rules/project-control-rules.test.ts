/**
 * Rule 12, project status and stage names: sessions, stop, pause, start.
 * The flow rules of docs/state-machine.md, one `describe` per rule, against the pure state
 * machine (the handlers in src/transitions/). Each test builds a small project, drives it with
 * commands and checks the resulting state, events, incidents and decision cards.
 */
import { describe, expect, it } from "vitest";
import { STOP_OPTION_ID } from "../../src/index.ts";
import { expectDomainError } from "../support/rule-helpers.ts";
import {
  activeRunOf,
  activeRuns,
  buildState,
  claimFor,
  createDriver,
  decisionOf,
  getTask,
  task,
  toBlocked,
  toReview,
} from "../support/state-builder.ts";

describe("rule 12: max_sessions exhaustion and stop", () => {
  it("exhaustion pauses the start with a summary; no task becomes done", () => {
    const d = createDriver();
    let s = buildState({ project: { sessionsLimit: 1 }, tasks: [task("A"), task("B")] });
    const reviewed = toReview(d, s, "A");
    s = reviewed.state;
    expect(s.project.sessionsUsed).toBe(1);
    const result = d.step(s, { kind: "claim" });
    expect(result.changes.runs).toEqual([]);
    expect(result.state.project).toMatchObject({ status: "paused" });
    expect(result.state.project.statusReason).toContain("max_sessions (1)");
    const exhausted = result.events.find((e) => e.type === "project.sessions_exhausted");
    expect(exhausted?.data).toEqual({ sessionsLimit: 1, summary: { review: 1, todo: 1 } });
    expect([...result.state.tasks.values()].map((t) => t.status)).not.toContain("done");
  });

  it("does not pause while runs of the start are still active, and a new start resets the count", () => {
    const d = createDriver();
    let s = buildState({ project: { sessionsLimit: 1, concurrency: 2 }, tasks: [task("A"), task("B")] });
    s = d.apply(s, { kind: "claim" });
    expect(activeRuns(s)).toHaveLength(1);
    const r = d.step(s, { kind: "claim" });
    expect(r.state.project.status).toBe("active");
    expect(r.events).toEqual([]);
    s = d.apply(r.state, { kind: "cancel", taskId: "A", by: "op" });
    s = d.apply(s, { kind: "claim" });
    expect(s.project.status).toBe("paused");
    s = d.apply(s, { kind: "set-project-status", status: "active", by: "op" });
    expect(s.project.sessionsUsed).toBe(0);
    s = d.apply(s, { kind: "claim" });
    expect(activeRunOf(s, "B").action).toBe("execute");
  });

  it("the stop command cancels the item and its active run, keeps its work, turns continuous off, creates nothing", () => {
    const d = createDriver();
    const reviewed = toReview(
      d,
      buildState({ project: { continuous: true }, tasks: [task("A"), task("B")] }),
      "A",
    );
    const review = claimFor(d, reviewed.state, "A");
    const result = d.step(review.state, { kind: "stop", taskId: "A", by: "op" });
    const a = getTask(result.state, "A");
    expect(a).toMatchObject({ status: "cancelled", branchHead: "c0ffee" });
    expect(a.statusReason).toContain("work is kept");
    expect(result.state.runs.get(review.run.id)?.status).toBe("cancelled");
    expect(result.state.project.continuous).toBe(false);
    expect(result.changes.createdTaskIds.size).toBe(0);
    expect(result.changes.createdRunIds.size).toBe(0);
    expect(result.state.tasks.size).toBe(2);
    expectDomainError(
      () => d.step(result.state, { kind: "stop", taskId: "A", by: "op" }),
      "invalid_transition",
    );
  });

  it("the stop decision option cancels the item and its blocked original, continuous off, nothing created", () => {
    const d = createDriver();
    const b = toBlocked(d, buildState({ project: { continuous: true }, tasks: [task("A")] }), "A", {
      needsUser: true,
      reason: "which database?",
    });
    const card = decisionOf(b.state, b.resolverId);
    expect(card?.options.map((o) => o.id)).toContain(STOP_OPTION_ID);
    const result = d.step(b.state, {
      kind: "resolve-decision",
      decisionId: card?.id ?? "",
      optionId: STOP_OPTION_ID,
      by: "op",
      resolutionId: "res-stop",
    });
    expect(getTask(result.state, b.resolverId).status).toBe("cancelled");
    expect(getTask(result.state, "A").status).toBe("cancelled");
    expect(decisionOf(result.state, b.resolverId)).toMatchObject({
      status: "resolved",
      selectedOption: "stop",
      resolutionId: "res-stop",
    });
    expect(result.state.project.continuous).toBe(false);
    expect(result.changes.createdTaskIds.size).toBe(0);
    expect(result.changes.createdRunIds.size).toBe(0);
    expect(d.step(result.state, { kind: "claim" }).changes.runs).toEqual([]);
  });
});

describe("project status", () => {
  it("stopping the project cancels active runs and their tasks are scheduled again after a restart", () => {
    const d = createDriver();
    let s = buildState({ project: { concurrency: 2 }, tasks: [task("A"), task("B")] });
    const reviewed = toReview(d, s, "A");
    s = d.apply(reviewed.state, { kind: "claim" }); // review of A + execute of B
    expect(activeRuns(s)).toHaveLength(2);
    s = d.apply(s, { kind: "set-project-status", status: "stopped", by: "op" });
    expect(activeRuns(s)).toEqual([]);
    expect(s.project.status).toBe("stopped");
    s = d.apply(s, { kind: "set-project-status", status: "active", by: "op" });
    s = d.apply(s, { kind: "claim" });
    expect(
      activeRuns(s)
        .map((r) => [r.taskId, r.action])
        .sort(),
    ).toEqual([
      ["A", "review"],
      ["B", "execute"],
    ]);
  });
});

describe("start and mission stages are stage names (issue 19 hole 5)", () => {
  it("refuses a stage with escape sequences, spaces or newlines from any caller, and accepts S01", () => {
    const d = createDriver();
    const s = buildState({ tasks: [task("A")] });
    for (const stage of ["\u001b[31mS01", "S01 x", "S01\n", "\u009b2J", "", "x".repeat(33)]) {
      const error = expectDomainError(
        () => d.apply(s, { kind: "start-project", by: "op", stage, sessionsLimit: null }),
        "invalid_settings",
      );
      expect(error.message).toContain("a stage name such as S01");
      expectDomainError(
        () =>
          d.apply(s, {
            kind: "start-mission",
            by: "op",
            objective: "o",
            stage,
            sessionsLimit: null,
            maxRounds: 1,
          }),
        "invalid_settings",
      );
    }
    expect(
      d.apply(s, { kind: "start-project", by: "op", stage: "S01", sessionsLimit: null }).project.stage,
    ).toBe("S01");
  });
});
