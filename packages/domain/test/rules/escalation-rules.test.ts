/**
 * Rules 4–6: escalation, resolvers and their limits.
 * The flow rules of docs/state-machine.md, one `describe` per rule, against the pure state
 * machine (the handlers in src/transitions/). Each test builds a small project, drives it with
 * commands and checks the resulting state, events, incidents and decision cards.
 */
import { describe, expect, it } from "vitest";
import { firstRunnable, MAX_REMEDIATIONS_PER_ROOT, type ProjectState } from "../../src/index.ts";
import { scripted } from "../support/rule-helpers.ts";
import {
  activeRunOf,
  activeRuns,
  apply,
  buildState,
  claimFor,
  createDriver,
  decisionOf,
  getTask,
  resolversOf,
  START_MS,
  task,
  toBlocked,
  toDone,
  toReview,
} from "../support/state-builder.ts";

describe("rule 4: escalate → checkpoint, blocked original, resolver scheduled first", () => {
  it("blocks the original and creates a todo resolver with its scope and prerequisites, not depending on it", () => {
    const d = createDriver();
    const base = buildState({
      project: { concurrency: 1 },
      tasks: [
        task("P"),
        task("A", { prerequisites: ["P"], scope: ["src/a/**"], role: "security", priority: 2 }),
        task("Z", { priority: 100 }),
      ],
    });
    let s = toDone(d, base, "Z");
    s = toDone(d, s, "P");
    const claimed = claimFor(d, s, "A");
    const result = d.step(claimed.state, {
      kind: "escalate",
      runId: claimed.run.id,
      reason: "API key for the payment sandbox is missing",
      checkpointRef: "overseer/checkpoint/A/x",
    });
    const original = getTask(result.state, "A");
    const [resolver] = resolversOf(result.state, "A");
    expect(resolver).toBeDefined();
    if (!resolver) return;
    expect(original).toMatchObject({ status: "blocked", blockedBy: resolver.id, returnTo: "todo" });
    expect(original.statusReason).toContain("API key");
    expect(resolver).toMatchObject({
      status: "todo",
      kind: "resolver",
      parentId: "A",
      rootId: "A",
      depth: 1,
      role: "security",
      scope: ["src/a/**"],
      prerequisites: ["P"],
    });
    expect(resolver.prerequisites).not.toContain("A");
    expect(resolver.body).toContain("API key for the payment sandbox is missing");
    expect(result.changes.createdTaskIds.has(resolver.id)).toBe(true);
    expect(result.state.runs.get(claimed.run.id)).toMatchObject({
      status: "finished",
      transition: "escalate",
    });
    expect(result.events.find((e) => e.type === "task.escalated")?.data).toMatchObject({
      checkpointRef: "overseer/checkpoint/A/x",
    });
    expect(result.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(["task.blocked", "resolver.created", "run.finished"]),
    );
  });

  it("schedules the resolver before a higher-priority ordinary task and reviews it like any task", () => {
    const d = createDriver();
    const blocked = toBlocked(d, buildState({ tasks: [task("A")] }), "A");
    // Ordinary work with a much higher priority arrives after the escalation.
    let s: ProjectState = {
      ...blocked.state,
      tasks: new Map([...blocked.state.tasks, ["B", task("B", { priority: 500 })]]),
    };
    s = d.apply(s, { kind: "claim" });
    const run = activeRunOf(s, blocked.resolverId);
    expect(run.action).toBe("resolve");
    expect(getTask(s, "B").status).toBe("todo");
    s = d.apply(s, { kind: "submit", runId: run.id, message: "fix", commitSha: "9", branchHead: "9" });
    expect(getTask(s, blocked.resolverId).status).toBe("review");
    const review = claimFor(d, s, blocked.resolverId);
    expect(review.run.action).toBe("review");
    expect(review.run.agentId).not.toBe(run.agentId);
  });

  it("puts the resolver ahead of ordinary work in the schedule", () => {
    const d = createDriver();
    const s = buildState({
      project: { concurrency: 2 },
      tasks: [task("A"), task("B", { priority: 50 }), task("C", { priority: 60 })],
    });
    const claimed = d.apply(s, { kind: "claim" });
    const runC = activeRunOf(claimed, "C");
    const escalated = d.apply(claimed, { kind: "escalate", runId: runC.id, reason: "r" });
    const resolverId = getTask(escalated, "C").blockedBy ?? "";
    expect(firstRunnable(escalated, d.ctx.now)?.id).toBe(resolverId);
    const next = d.apply(escalated, { kind: "claim" });
    expect(
      activeRuns(next)
        .map((r) => r.taskId)
        .sort(),
    ).toEqual(["B", resolverId].sort());
  });

  it("escalating from review remembers to return to review", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    const s = d.apply(review.state, {
      kind: "escalate",
      runId: review.run.id,
      reason: "cannot run the tests",
    });
    expect(getTask(s, "A")).toMatchObject({ status: "blocked", returnTo: "review" });
    expect(getTask(s, "A").retiredAgentIds).toEqual([review.run.agentId]);
  });
});

describe("rule 5: only a done resolver unblocks its original; the reporter's id is retired", () => {
  it("the resolver's submit or reject leaves the original blocked; its approve returns it to todo", () => {
    const d = createDriver();
    const blocked = toBlocked(d, buildState({ tasks: [task("A")] }), "A");
    const r = blocked.resolverId;
    const inReview = toReview(d, blocked.state, r);
    expect(getTask(inReview.state, "A").status).toBe("blocked");
    const review = claimFor(d, inReview.state, r);
    const rejected = d.apply(review.state, { kind: "reject", runId: review.run.id, feedback: "not yet" });
    expect(getTask(rejected, r).status).toBe("todo");
    expect(getTask(rejected, "A").status).toBe("blocked");

    const done = toDone(d, rejected, r);
    expect(getTask(done, r).status).toBe("done");
    expect(getTask(done, "A")).toMatchObject({ status: "todo", blockedBy: null, returnTo: null });
    expect(getTask(done, "A").feedback).toContain(r);
  });

  it("a task escalated from review returns to review and gets a new reviewer", () => {
    const d = createDriver({ hexRepeat: 3 });
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    let s = d.apply(review.state, { kind: "escalate", runId: review.run.id, reason: "flaky CI" });
    s = toDone(d, s, getTask(s, "A").blockedBy ?? "");
    expect(getTask(s, "A").status).toBe("review");
    const again = claimFor(d, s, "A");
    expect(again.run.action).toBe("review");
    expect(again.run.agentId).not.toBe(review.run.agentId);
    expect(again.run.agentId).not.toBe(reviewed.run.agentId);
  });

  it("never reuses a retired agent id, even when the escalating run is no longer loaded", () => {
    const d = createDriver();
    const blocked = toBlocked(d, buildState({ tasks: [task("A")] }), "A");
    const retired = blocked.run.agentId;
    expect(getTask(blocked.state, "A").retiredAgentIds).toEqual([retired]);
    const s = toDone(d, blocked.state, blocked.resolverId);
    // The coordinator loads active runs only: nothing but the task remembers the retired id.
    const loaded: ProjectState = { ...s, runs: new Map() };
    const retiredHex = retired.slice(-12);
    const next = apply(
      loaded,
      { kind: "claim" },
      {
        now: START_MS,
        newRunId: () => "run-next",
        randomHex: scripted([retiredHex, retiredHex, "0000000000aa"]),
      },
    );
    expect(activeRunOf(next, "A").agentId).toBe("execute-general-0000000000aa");
  });
});

describe("rule 6: nested blockers, depth and remediation limits", () => {
  it("a resolver's own escalation creates a nested resolver under the same root", () => {
    const d = createDriver();
    const first = toBlocked(d, buildState({ tasks: [task("A")] }), "A");
    const second = toBlocked(d, first.state, first.resolverId);
    const nested = getTask(second.state, second.resolverId);
    expect(nested).toMatchObject({
      status: "todo",
      kind: "resolver",
      parentId: first.resolverId,
      rootId: "A",
      depth: 2,
    });
    // Done nested resolver unblocks the first resolver only.
    const s = toDone(d, second.state, second.resolverId);
    expect(getTask(s, first.resolverId).status).toBe("todo");
    expect(getTask(s, "A").status).toBe("blocked");
    const end = toDone(d, s, first.resolverId);
    expect(getTask(end, "A").status).toBe("todo");
  });

  it("depth 1..3 resolvers are todo; a resolver deeper than 3 is awaiting_input with a blocker_limit card", () => {
    const d = createDriver();
    let s = buildState({ tasks: [task("A")] });
    let current = "A";
    for (const depth of [1, 2, 3]) {
      const b = toBlocked(d, s, current);
      expect(getTask(b.state, b.resolverId)).toMatchObject({ depth, status: "todo" });
      s = b.state;
      current = b.resolverId;
    }
    const claimed = claimFor(d, s, current);
    const result = d.step(claimed.state, { kind: "escalate", runId: claimed.run.id, reason: "still stuck" });
    const deep = resolversOf(result.state, current)[0];
    expect(deep).toMatchObject({ depth: 4, status: "awaiting_input", awaitingReason: "blocker_limit" });
    const card = decisionOf(result.state, deep?.id ?? "");
    expect(card).toMatchObject({ status: "pending", optionsSource: "none", revision: 1 });
    expect(card?.reason).toContain("depth 4");
    expect(result.changes.createdDecisionIds.has(card?.id ?? "")).toBe(true);
    // Processes never multiply: nothing is claimable now.
    const after = d.step(result.state, { kind: "claim" });
    expect(after.changes.runs).toEqual([]);
  });

  it("the 7th remediation under one root is awaiting_input with blocker_limit", () => {
    const d = createDriver();
    let s = buildState({ tasks: [task("A")] });
    for (let n = 1; n <= MAX_REMEDIATIONS_PER_ROOT; n++) {
      const b = toBlocked(d, s, "A");
      expect(getTask(b.state, b.resolverId)).toMatchObject({ status: "todo", rootId: "A" });
      s = toDone(d, b.state, b.resolverId);
      expect(getTask(s, "A").status).toBe("todo");
    }
    const claimed = claimFor(d, s, "A");
    const result = d.step(claimed.state, { kind: "escalate", runId: claimed.run.id, reason: "seventh" });
    const seventh = getTask(result.state, getTask(result.state, "A").blockedBy ?? "");
    expect(seventh).toMatchObject({ status: "awaiting_input", awaitingReason: "blocker_limit" });
    expect(decisionOf(result.state, seventh.id)).toMatchObject({
      status: "pending",
      title: "Blocker limit reached under A",
    });
    expect(decisionOf(result.state, seventh.id)?.reason).toContain("remediation 7");
    expect(resolversOf(result.state, "A")).toHaveLength(7);
  });

  it("remediations count nested resolvers under the same root too", () => {
    const tasks = [task("A", { status: "in_progress" })];
    for (let n = 1; n <= 6; n++) {
      tasks.push(
        task(`A.R${n}`, {
          kind: "resolver",
          parentId: n % 2 ? "A" : `A.R${n - 1}`,
          rootId: "A",
          depth: 1,
          status: "done",
        }),
      );
    }
    const run = {
      id: "run-x",
      projectId: "demo",
      taskId: "A",
      agentId: "execute-general-00000000000f",
      action: "execute" as const,
      attempt: 1,
      status: "running" as const,
      transition: null,
      failure: null,
      notBefore: null,
      createdAt: START_MS,
      workerId: "w1",
      startedAt: START_MS,
    };
    const s = createDriver().apply(buildState({ tasks, runs: [run] }), {
      kind: "escalate",
      runId: "run-x",
      reason: "r",
    });
    expect(getTask(s, "A.R7")).toMatchObject({ status: "awaiting_input", awaitingReason: "blocker_limit" });
  });

  it("an operator can let a limited resolver run anyway", () => {
    const d = createDriver();
    let s = buildState({ tasks: [task("A")] });
    let current = "A";
    for (let i = 0; i < 4; i++) {
      const claimed = claimFor(d, s, current);
      s = d.apply(claimed.state, { kind: "escalate", runId: claimed.run.id, reason: "r" });
      current = getTask(s, current).blockedBy ?? "";
    }
    expect(getTask(s, current).status).toBe("awaiting_input");
    s = d.apply(s, {
      kind: "resolve-decision",
      decisionId: `decision-${current}`,
      optionId: "continue",
      by: "op",
      resolutionId: "res-1",
    });
    expect(getTask(s, current).status).toBe("todo");
    expect(firstRunnable(s, d.ctx.now)?.id).toBe(current);
  });
});
