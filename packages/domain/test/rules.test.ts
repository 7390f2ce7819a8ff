/**
 * The flow rules of docs/state-machine.md, one `describe` per rule, against the pure state machine. Each test
 * builds a small project, drives it with commands and checks the resulting state, events,
 * incidents and decision cards. Git, processes and the Postgres lease are other packages'.
 */
import { describe, expect, it } from "vitest";
import {
  AGENT_ID_PATTERN,
  type Command,
  DomainError,
  firstRunnable,
  MAX_REMEDIATIONS_PER_ROOT,
  nextWakeAt,
  type ProjectState,
  runnableTasks,
  STOP_OPTION_ID,
} from "../src/index.ts";
import {
  activeRunOf,
  activeRuns,
  apply,
  buildState,
  claimFor,
  createDriver,
  type Driver,
  decisionOf,
  getTask,
  resolversOf,
  runsOf,
  START_MS,
  task,
  toBlocked,
  toDone,
  toReview,
} from "./support/state-builder.ts";

function expectDomainError(fn: () => unknown, code: DomainError["code"]): DomainError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe(code);
    return error as DomainError;
  }
  throw new Error(`expected a DomainError with code ${code}, nothing was thrown`);
}

const ids = (tasks: readonly { id: string }[]) => tasks.map((t) => t.id);

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

describe("rule 2: execute → submit → review by a fresh agent", () => {
  it("queues an execute run with a well-formed fresh agent id and moves the task in progress", () => {
    const d = createDriver();
    const s0 = buildState({ tasks: [task("S00-1", { role: "CI/CD" })] });
    const result = d.step(s0, { kind: "claim" });
    const run = activeRunOf(result.state, "S00-1");
    expect(run).toMatchObject({ action: "execute", status: "queued", attempt: 1, taskId: "S00-1" });
    expect(run.agentId).toMatch(AGENT_ID_PATTERN);
    expect(run.agentId).toBe("execute-ci-cd-000000000001");
    expect(result.changes.createdRunIds.has(run.id)).toBe(true);
    expect(getTask(result.state, "S00-1").status).toBe("in_progress");
    expect(result.events.map((e) => e.type)).toContain("run.queued");

    const started = d.step(result.state, { kind: "run-started", runId: run.id, workerId: "w1" });
    expect(started.state.runs.get(run.id)?.status).toBe("running");
  });

  it("submit puts the task in review, records the executor and the agent's commit message", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "submit",
      runId: claimed.run.id,
      message: "feat: add the thing",
      summary: "added",
      commitSha: "1111",
      branchHead: "1111",
    });
    const t = getTask(result.state, "A");
    expect(t).toMatchObject({ status: "review", executorAgentId: claimed.run.agentId, branchHead: "1111" });
    expect(result.state.runs.get(claimed.run.id)).toMatchObject({ status: "finished", transition: "submit" });
    const submitted = result.events.find((e) => e.type === "task.submitted");
    expect(submitted?.data).toMatchObject({ message: "feat: add the thing", commitSha: "1111" });
  });

  it("queues the reviewer with a new agent id, never the executor's", () => {
    const d = createDriver({ hexRepeat: 4 }); // the context offers the executor's hex again
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    expect(review.run.action).toBe("review");
    expect(review.run.agentId).toMatch(AGENT_ID_PATTERN);
    expect(review.run.agentId).not.toBe(reviewed.run.agentId);
    expect(getTask(review.state, "A").status).toBe("review");
  });

  it("skips the recorded executor id when minting, even if the executor's run is not loaded", () => {
    // The state a coordinator loads holds active runs only; the task's executorAgentId is all
    // that is left of the executor. Script the randomness to offer exactly that id first.
    const s = buildState({
      tasks: [task("A", { role: "x", status: "review", executorAgentId: "review-x-0000000000aa" })],
    });
    const ctx = {
      now: START_MS,
      newRunId: () => "run-r",
      randomHex: scripted(["0000000000aa", "0000000000bb"]),
    };
    const next = apply(s, { kind: "claim" }, ctx);
    expect(activeRunOf(next, "A").agentId).toBe("review-x-0000000000bb");
  });

  it("refuses submit from a review run", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    expectDomainError(
      () =>
        d.step(review.state, {
          kind: "submit",
          runId: review.run.id,
          message: "m",
          commitSha: null,
          branchHead: null,
        }),
      "invalid_transition",
    );
  });

  it("refuses an outcome for an unknown run", () => {
    const d = createDriver();
    expectDomainError(
      () => d.step(buildState({ tasks: [task("A")] }), { kind: "reject", runId: "nope", feedback: "f" }),
      "not_found",
    );
  });
});

describe("rule 3: approve → done, reject → todo with the reviewer's feedback", () => {
  it("approve by a fresh reviewer makes the task done", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    const result = d.step(review.state, {
      kind: "approve",
      runId: review.run.id,
      feedback: "lgtm",
      landedSha: "2222",
      landedBranch: "main",
    });
    expect(getTask(result.state, "A").status).toBe("done");
    expect(result.state.runs.get(review.run.id)).toMatchObject({ status: "finished", transition: "approve" });
    expect(result.events.find((e) => e.type === "task.approved")?.data).toMatchObject({
      landedSha: "2222",
      landedBranch: "main",
      executorAgentId: reviewed.run.agentId,
    });
  });

  it("refuses an approve by the executor's own agent id and changes nothing", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const executor = reviewed.run.agentId;
    const selfReview = {
      ...reviewed.run,
      id: "run-self",
      action: "review" as const,
      status: "running" as const,
      transition: null,
    };
    const s: ProjectState = {
      ...reviewed.state,
      runs: new Map([...reviewed.state.runs, [selfReview.id, selfReview]]),
    };
    const before = structuredClone(s);
    const error = expectDomainError(
      () => d.step(s, { kind: "approve", runId: "run-self", landedSha: null, landedBranch: null }),
      "invalid_transition",
    );
    expect(error.message).toContain(executor);
    expect(s).toEqual(before);
    expect(getTask(s, "A").status).toBe("review");
  });

  it("refuses an approve of any head but the one submitted, and accepts exactly that one", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    const before = structuredClone(review.state);
    for (const reviewedHead of ["deadbeef", null]) {
      const error = expectDomainError(
        () =>
          d.step(review.state, {
            kind: "approve",
            runId: review.run.id,
            landedSha: "2222",
            landedBranch: "main",
            reviewedHead,
          }),
        "invalid_transition",
      );
      expect(error.message).toContain("c0ffee");
    }
    expect(review.state).toEqual(before);
    const ok = d.step(review.state, {
      kind: "approve",
      runId: review.run.id,
      landedSha: "2222",
      landedBranch: "main",
      reviewedHead: "c0ffee",
    });
    expect(getTask(ok.state, "A").status).toBe("done");
  });

  it("refuses approve and reject from an execute run", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    expectDomainError(
      () =>
        d.step(claimed.state, {
          kind: "approve",
          runId: claimed.run.id,
          landedSha: null,
          landedBranch: null,
        }),
      "invalid_transition",
    );
    expectDomainError(
      () => d.step(claimed.state, { kind: "reject", runId: claimed.run.id, feedback: "x" }),
      "invalid_transition",
    );
  });

  it("reject returns the task to todo with the feedback, and the next executor is fresh", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    const s = d.apply(review.state, { kind: "reject", runId: review.run.id, feedback: "tests are missing" });
    expect(getTask(s, "A")).toMatchObject({ status: "todo", feedback: "tests are missing" });
    const again = claimFor(d, s, "A");
    expect(again.run.action).toBe("execute");
    expect(new Set([reviewed.run.agentId, review.run.agentId, again.run.agentId]).size).toBe(3);
    // Feedback stays on the task for the next executor's prompt until it submits.
    expect(getTask(again.state, "A").feedback).toBe("tests are missing");
  });
});

describe("rule 3: an approve that does not land (land-failed) goes back to an executor", () => {
  const conflict = (runId: string): Command => ({
    kind: "land-failed",
    runId,
    reason: "conflict",
    files: ["src/b.ts", "src/a.ts", "src/b.ts"],
    details: "CONFLICT (content): Merge conflict in src/a.ts",
    branch: "trunk",
    reviewerFeedback: "looks good",
    maxAttempts: 3,
  });

  it("returns the task to todo with the files recorded, feedback naming them, and an event", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    const r = d.step(review.state, conflict(review.run.id));
    const a = getTask(r.state, "A");
    expect(a).toMatchObject({
      status: "todo",
      landing: { reason: "conflict", files: ["src/a.ts", "src/b.ts"] },
    });
    expect(a.feedback).toMatch(/could not land on trunk: it conflicts with trunk in src\/a\.ts, src\/b\.ts/);
    expect(a.feedback).toContain("CONFLICT (content): Merge conflict in src/a.ts");
    expect(a.feedback).toContain("Reviewer notes: looks good");
    expect(r.events.find((e) => e.type === "task.landing_failed")?.data).toMatchObject({
      reason: "conflict",
      files: ["src/a.ts", "src/b.ts"],
      branch: "trunk",
    });
    // The reviewer's run ended with its own transition; nothing is done, nothing landed.
    expect(r.state.runs.get(review.run.id)).toMatchObject({ status: "finished", transition: "approve" });
    expect(r.events.some((e) => e.type === "task.approved")).toBe(false);
    // The next run is a fresh executor; its submit clears the landing failure.
    const again = claimFor(d, r.state, "A");
    expect(again.run.action).toBe("execute");
    expect(getTask(again.state, "A").landing).not.toBeNull();
    const submitted = d.apply(again.state, {
      kind: "submit",
      runId: again.run.id,
      message: "Resolve",
      commitSha: "c2",
      branchHead: "c2",
    });
    expect(getTask(submitted, "A")).toMatchObject({ status: "review", landing: null, feedback: null });
  });

  it("the attempts-th failed landing in a row waits for an operator; the answer sends it back with main merged in", () => {
    const d = createDriver();
    let s = buildState({ tasks: [task("A")] });
    const fail = (state: ProjectState): ProjectState => {
      const reviewed = toReview(d, state, "A");
      const review = claimFor(d, reviewed.state, "A");
      return d.apply(review.state, { ...conflict(review.run.id), maxAttempts: 2 } as Command);
    };
    s = fail(s);
    expect(getTask(s, "A")).toMatchObject({ status: "todo", landingFailures: 1 });
    s = fail(s);
    const a = getTask(s, "A");
    expect(a).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "other",
      returnTo: "todo",
      landingFailures: 0,
      landing: { reason: "conflict", files: ["src/a.ts", "src/b.ts"] },
    });
    expect(a.statusReason).toBe(
      "Approved work of A failed to land 2 times in a row; it conflicts with trunk in src/a.ts, src/b.ts.",
    );
    expect(decisionOf(s, "A")?.status).toBe("pending");
    const answered = d.apply(s, { kind: "answer", taskId: "A", text: "keep both lines", by: "op" });
    expect(getTask(answered, "A")).toMatchObject({ status: "todo", landing: { reason: "conflict" } });
    expect(claimFor(d, answered, "A").run.action).toBe("execute");
  });

  it("a failed check keeps its output's tail, bounded", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    const output = `${"x".repeat(10_000)}\nFAIL test/last.test.ts`;
    const s = d.apply(review.state, {
      kind: "land-failed",
      runId: review.run.id,
      reason: "check_failed",
      files: [],
      details: output,
      branch: "main",
      maxAttempts: 3,
    });
    const a = getTask(s, "A");
    expect(a.landing).toEqual({ reason: "check_failed", files: [] });
    expect(a.feedback).toContain("check command failed on the integrated tree");
    expect(a.feedback).toContain("FAIL test/last.test.ts");
    expect((a.feedback ?? "").length).toBeLessThan(5000);
  });

  it("only a fresh review run of a task in review may record it; a redelivery is a no-op", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    expectDomainError(() => d.step(claimed.state, conflict(claimed.run.id)), "invalid_transition");
    const reviewed = toReview(d, buildState({ tasks: [task("B")] }), "B");
    const review = claimFor(d, reviewed.state, "B");
    const first = d.step(review.state, conflict(review.run.id));
    const second = d.step(first.state, conflict(review.run.id));
    expect(second.outcome).toBe("already_applied");
    expect(second.state).toBe(first.state);
    expect(second.events).toEqual([]);
  });
});

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

describe("rule 7: awaiting_input waits for an operator; release-external; answers and decisions", () => {
  function needsUser(d: Driver) {
    return toBlocked(d, buildState({ tasks: [task("A")] }), "A", {
      needsUser: true,
      category: "credentials",
      reason: "Needs a deploy token",
      question: "Which token should I use?",
      options: [
        { id: "Use Staging", label: "Staging token" },
        { id: "use staging", label: "duplicate" },
        { id: "prod", label: "Production token", requires_note: true },
      ],
    });
  }

  it("an agent that needs the user creates an awaiting_input resolver with the agent's card", () => {
    const d = createDriver();
    const b = needsUser(d);
    const resolver = getTask(b.state, b.resolverId);
    expect(resolver).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "credentials",
      returnTo: "todo",
    });
    const card = decisionOf(b.state, b.resolverId);
    expect(card).toMatchObject({
      id: `decision-${b.resolverId}`,
      itemId: b.resolverId,
      status: "pending",
      question: "Which token should I use?",
      optionsSource: "agent",
    });
    expect(card?.options.map((o) => o.id)).toEqual(["use_staging", "prod"]);
    expect(getTask(b.state, "A").status).toBe("blocked");
  });

  it("is never done by itself: claims leave it waiting", () => {
    const d = createDriver();
    let s = needsUser(d).state;
    for (let i = 0; i < 3; i++) {
      d.ctx.advance(60_000);
      const r = d.step(s, { kind: "claim" });
      expect(r.changes.runs).toEqual([]);
      s = r.state;
    }
    expect([...s.tasks.values()].filter((t) => t.status === "done")).toEqual([]);
  });

  it("release-external makes the resolver runnable without completing it or unblocking the original", () => {
    const d = createDriver();
    const b = toBlocked(d, buildState({ tasks: [task("A")] }), "A", {
      needsUser: true,
      category: "external_admin",
      reason: "DNS record must be created by an admin",
    });
    const result = d.step(b.state, {
      kind: "release-external",
      taskId: b.resolverId,
      reason: "admin created it",
      by: "op",
    });
    const resolver = getTask(result.state, b.resolverId);
    expect(resolver).toMatchObject({ status: "todo", awaitingReason: null });
    expect(resolver.answers.at(-1)).toMatchObject({ answer: "admin created it", by: "op" });
    expect(getTask(result.state, "A").status).toBe("blocked");
    expect(decisionOf(result.state, b.resolverId)?.status).toBe("resolved");
    expect(firstRunnable(result.state, d.ctx.now)?.id).toBe(b.resolverId);
    expect(result.events.map((e) => e.type)).toContain("task.released");
  });

  it("release-external refuses ordinary tasks and resolvers that are not awaiting input", () => {
    const d = createDriver();
    const b = toBlocked(d, buildState({ tasks: [task("A")] }), "A");
    expectDomainError(
      () => d.step(b.state, { kind: "release-external", taskId: "A", reason: "r", by: "op" }),
      "invalid_transition",
    );
    expectDomainError(
      () => d.step(b.state, { kind: "release-external", taskId: b.resolverId, reason: "r", by: "op" }),
      "invalid_transition",
    );
    expectDomainError(
      () => d.step(b.state, { kind: "release-external", taskId: "nope", reason: "r", by: "op" }),
      "not_found",
    );
  });

  it("answer resolves the pending card with the text and releases the task", () => {
    const d = createDriver();
    const b = needsUser(d);
    const result = d.step(b.state, {
      kind: "answer",
      taskId: b.resolverId,
      text: "use the staging one",
      by: "op",
    });
    expect(getTask(result.state, b.resolverId).status).toBe("todo");
    expect(getTask(result.state, b.resolverId).answers.at(-1)).toMatchObject({
      question: "Which token should I use?",
      answer: "use the staging one",
    });
    const card = decisionOf(result.state, b.resolverId);
    expect(card).toMatchObject({ status: "resolved", selectedOption: "custom", note: "use the staging one" });
    expect(result.resolution).toMatchObject({
      decisionId: card?.id,
      optionId: "custom",
      resolutionId: card?.resolutionId,
    });
  });

  it("answer refuses empty text and terminal tasks", () => {
    const d = createDriver();
    const b = needsUser(d);
    expectDomainError(
      () => d.step(b.state, { kind: "answer", taskId: b.resolverId, text: "   ", by: "op" }),
      "note_required",
    );
    const done = toDone(d, buildState({ tasks: [task("A")] }), "A");
    expectDomainError(
      () => d.step(done, { kind: "answer", taskId: "A", text: "x", by: "op" }),
      "invalid_transition",
    );
  });

  it("resolve-decision with an offered option releases the task with the option recorded", () => {
    const d = createDriver();
    const b = needsUser(d);
    const result = d.step(b.state, {
      kind: "resolve-decision",
      decisionId: `decision-${b.resolverId}`,
      optionId: "use_staging",
      by: "op",
      resolutionId: "res-1",
    });
    expect(result.outcome).toBe("applied");
    expect(result.resolution).toEqual({
      decisionId: `decision-${b.resolverId}`,
      resolutionId: "res-1",
      optionId: "use_staging",
    });
    expect(decisionOf(result.state, b.resolverId)).toMatchObject({
      status: "resolved",
      selectedOption: "use_staging",
      resolutionId: "res-1",
      resolvedBy: "op",
    });
    expect(getTask(result.state, b.resolverId).status).toBe("todo");
    expect(getTask(result.state, b.resolverId).answers.at(-1)?.answer).toBe("Staging token");
  });

  it("custom is always accepted but requires a note; an option's own requires_note is enforced", () => {
    const d = createDriver();
    const b = needsUser(d);
    const decisionId = `decision-${b.resolverId}`;
    const base = { kind: "resolve-decision" as const, decisionId, by: "op", resolutionId: "res-1" };
    expectDomainError(() => d.step(b.state, { ...base, optionId: "custom" }), "note_required");
    expectDomainError(() => d.step(b.state, { ...base, optionId: "custom", note: "  " }), "note_required");
    expectDomainError(() => d.step(b.state, { ...base, optionId: "prod" }), "note_required");
    const ok = d.step(b.state, { ...base, optionId: "custom", note: "use token #3" });
    expect(decisionOf(ok.state, b.resolverId)).toMatchObject({
      selectedOption: "custom",
      note: "use token #3",
    });
    expect(getTask(ok.state, b.resolverId).answers.at(-1)?.answer).toContain("use token #3");
  });

  it("an option that is not offered is refused with the allowed ids", () => {
    const d = createDriver();
    const b = needsUser(d);
    const error = expectDomainError(
      () =>
        d.step(b.state, {
          kind: "resolve-decision",
          decisionId: `decision-${b.resolverId}`,
          optionId: "nope",
          by: "op",
          resolutionId: "r",
        }),
      "invalid_option",
    );
    expect(error.details.allowed).toEqual(["use_staging", "prod", "custom", "stop"]);
    expect(error.message).toContain("use_staging, prod, custom, stop");
    expectDomainError(
      () =>
        d.step(b.state, {
          kind: "resolve-decision",
          decisionId: "decision-nope",
          optionId: "x",
          by: "op",
          resolutionId: "r",
        }),
      "not_found",
    );
  });

  it("resolving again with the same option is already_applied with the same resolution id", () => {
    const d = createDriver();
    const b = needsUser(d);
    const decisionId = `decision-${b.resolverId}`;
    const first = d.step(b.state, {
      kind: "resolve-decision",
      decisionId,
      optionId: "use_staging",
      by: "op",
      resolutionId: "res-1",
    });
    const again = d.step(first.state, {
      kind: "resolve-decision",
      decisionId,
      optionId: "use_staging",
      by: "someone-else",
      resolutionId: "res-2",
    });
    expect(again.outcome).toBe("already_applied");
    expect(again.resolution?.resolutionId).toBe("res-1");
    expect(again.state).toBe(first.state);
    expect(again.events).toEqual([]);
    expect(again.changes.tasks).toEqual([]);
  });

  it("another option after resolution is stale and changes nothing", () => {
    const d = createDriver();
    const b = needsUser(d);
    const decisionId = `decision-${b.resolverId}`;
    const first = d.apply(b.state, {
      kind: "resolve-decision",
      decisionId,
      optionId: "use_staging",
      by: "op",
      resolutionId: "res-1",
    });
    const before = structuredClone(first);
    const error = expectDomainError(
      () =>
        d.step(first, {
          kind: "resolve-decision",
          decisionId,
          optionId: "custom",
          note: "x",
          by: "op",
          resolutionId: "res-2",
        }),
      "stale",
    );
    expect(error.details).toMatchObject({
      application_status: "stale",
      resolution_id: "res-1",
      selected_option: "use_staging",
    });
    expect(first).toEqual(before);
  });

  it("run-misconfigured puts the task awaiting_input (harness_not_configured) with a card and an incident", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "run-misconfigured",
      runId: claimed.run.id,
      reason: "harness_not_configured",
      message: "No argv is configured for role general.",
    });
    expect(getTask(result.state, "A")).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "harness_not_configured",
      returnTo: "todo",
    });
    expect(result.state.runs.get(claimed.run.id)?.status).toBe("failed");
    expect(result.incidents).toEqual([
      expect.objectContaining({ kind: "harness_not_configured", taskId: "A", runId: claimed.run.id }),
    ]);
    const card = decisionOf(result.state, "A");
    expect(card).toMatchObject({ status: "pending", title: "Harness not configured", optionsSource: "none" });
    expect(card?.options.map((o) => o.id)).toEqual(["continue", "custom", STOP_OPTION_ID]);
    // Every other task would fail the same way: the project pauses naming the cause.
    expect(result.state.project).toMatchObject({
      status: "paused",
      statusReason: "harness_not_configured in A: No argv is configured for role general.",
    });
    expect(d.step(result.state, { kind: "claim" }).changes.runs).toEqual([]);
    const resumed = d.apply(result.state, {
      kind: "resolve-decision",
      decisionId: "decision-A",
      optionId: "continue",
      by: "op",
      resolutionId: "res-1",
    });
    expect(getTask(resumed, "A").status).toBe("todo");
    // Continuing the card is the fix's one step: the project claims again.
    expect(resumed.project.status).toBe("active");
  });

  it("`start` after a configuration fix releases the card and resumes, in one step", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A"), task("B")] }), "A");
    const paused = d.apply(claimed.state, {
      kind: "run-misconfigured",
      runId: claimed.run.id,
      reason: "configuration_error",
      message: "the model API refused the credentials: Invalid API key (HTTP 401). Fix: set a valid key.",
    });
    expect(decisionOf(paused, "A")?.question).toContain("`overseer start --project");
    const started = d.step(paused, { kind: "start-project", by: "op", stage: null, sessionsLimit: null });
    expect(started.state.project.status).toBe("active");
    expect(getTask(started.state, "A")).toMatchObject({ status: "todo", awaitingReason: null });
    expect(decisionOf(started.state, "A")).toMatchObject({
      status: "resolved",
      selectedOption: "continue",
      resolvedBy: "op",
    });
    expect(getTask(started.state, "A").answers.at(-1)?.answer).toMatch(/configuration was fixed/);
    expect(ids(runnableTasks(started.state, d.ctx.now))).toEqual(["A", "B"]);
  });

  it("a misconfigured review run returns to review once the operator continues, and gets a new card revision next time", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    let review = claimFor(d, reviewed.state, "A");
    const cmd = (runId: string): Command => ({
      kind: "run-misconfigured",
      runId,
      reason: "configuration_error",
      message: "bad",
    });
    let s = d.apply(review.state, cmd(review.run.id));
    expect(getTask(s, "A")).toMatchObject({ status: "awaiting_input", returnTo: "review" });
    s = d.apply(s, { kind: "answer", taskId: "A", text: "fixed", by: "op" });
    expect(getTask(s, "A").status).toBe("review");
    expect(s.project.status).toBe("paused");
    s = d.apply(s, { kind: "start-project", by: "op", stage: null, sessionsLimit: null });
    review = claimFor(d, s, "A");
    s = d.apply(review.state, cmd(review.run.id));
    expect(decisionOf(s, "A")).toMatchObject({ status: "pending", revision: 2 });
  });
});

describe("rule 8: timeout kills the run and creates a remediation with the timeout as reason", () => {
  it("fails the run, records an incident and blocks the task behind a resolver", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "timeout",
      runId: claimed.run.id,
      stalled: false,
      seconds: 1800,
    });
    const run = result.state.runs.get(claimed.run.id);
    expect(run?.status).toBe("failed");
    expect(run?.failure).toContain("timed out after 1800 s");
    expect(result.incidents).toEqual([
      expect.objectContaining({ kind: "timeout", taskId: "A", runId: claimed.run.id }),
    ]);
    const a = getTask(result.state, "A");
    expect(a.status).toBe("blocked");
    expect(a.retiredAgentIds).toContain(claimed.run.agentId);
    const resolver = getTask(result.state, a.blockedBy ?? "");
    expect(resolver).toMatchObject({ status: "todo", kind: "resolver" });
    expect(resolver.body).toContain("timed out after 1800 s");
  });

  it("an idle stall is recorded as a stall incident", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "timeout",
      runId: claimed.run.id,
      stalled: true,
      seconds: 300,
    });
    expect(result.incidents.map((i) => i.kind)).toEqual(["stall"]);
    expect(result.state.runs.get(claimed.run.id)?.failure).toContain("stalled");
  });

  it("a stall names the idle time that triggered it, not the run's whole duration", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "timeout",
      runId: claimed.run.id,
      stalled: true,
      seconds: 100,
      idleSeconds: 45,
    });
    expect(result.incidents[0]?.message).toContain(
      "no output and no file change for 45 s, after 100 s of run",
    );
    expect(result.incidents[0]?.details).toMatchObject({ seconds: 100, idleSeconds: 45 });
  });
});

describe("rule 9: no transition → retry with exponential backoff, then a remediation", () => {
  const noTransition = (runId: string, crashed = false): Command => ({
    kind: "no-transition",
    runId,
    detail: "exit 1",
    crashed,
    maxAttempts: 3,
    backoffMs: 1000,
  });

  it("retries after 1×, then 2× the backoff, then escalates after maxAttempts", () => {
    const d = createDriver();
    let s = buildState({ tasks: [task("A")] });

    let claimed = claimFor(d, s, "A");
    expect(claimed.run.attempt).toBe(1);
    let r = d.step(claimed.state, noTransition(claimed.run.id));
    expect(r.state.runs.get(claimed.run.id)?.status).toBe("failed");
    expect(getTask(r.state, "A")).toMatchObject({ status: "todo", failures: 1, notBefore: d.ctx.now + 1000 });
    expect(r.events.find((e) => e.type === "task.retry_scheduled")?.data).toMatchObject({
      attempt: 2,
      delayMs: 1000,
    });
    expect(nextWakeAt(r.state, d.ctx.now)).toBe(d.ctx.now + 1000);
    expect(d.step(r.state, { kind: "claim" }).changes.runs).toEqual([]);

    d.ctx.advance(1000);
    claimed = claimFor(d, r.state, "A");
    expect(claimed.run.attempt).toBe(2);
    expect(getTask(claimed.state, "A").notBefore).toBeNull();
    r = d.step(claimed.state, noTransition(claimed.run.id));
    expect(getTask(r.state, "A")).toMatchObject({ status: "todo", failures: 2, notBefore: d.ctx.now + 2000 });
    // The next run is told why each earlier one ended, oldest first (the detail holds its last lines).
    expect(getTask(r.state, "A").feedback).toMatch(
      /^The previous run \(\S+\) ended without a transition: exit 1\n\nThe previous run \(\S+\) ended without a transition: exit 1$/,
    );

    d.ctx.advance(1999);
    expect(d.step(r.state, { kind: "claim" }).changes.runs).toEqual([]);
    d.ctx.advance(1);
    claimed = claimFor(d, r.state, "A");
    expect(claimed.run.attempt).toBe(3);
    r = d.step(claimed.state, noTransition(claimed.run.id));
    s = r.state;
    const a = getTask(s, "A");
    expect(a).toMatchObject({ status: "blocked", failures: 0, notBefore: null });
    expect(a.statusReason).toContain("attempt 3 of 3");
    expect(getTask(s, a.blockedBy ?? "")).toMatchObject({ status: "todo", kind: "resolver" });
  });

  it("a crash records a harness_crash incident; a review run retries in review", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    const r = d.step(review.state, noTransition(review.run.id, true));
    expect(r.incidents.map((i) => i.kind)).toEqual(["harness_crash"]);
    expect(getTask(r.state, "A")).toMatchObject({ status: "review", failures: 1 });
    d.ctx.advance(1000);
    const again = claimFor(d, r.state, "A");
    expect(again.run).toMatchObject({ action: "review", attempt: 2 });
  });

  it("after an escalation the unblocked task gets its full retry budget again", () => {
    const d = createDriver();
    const twice = (runId: string): Command => ({ ...noTransition(runId), maxAttempts: 2 }) as Command;
    let claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    let s = d.apply(claimed.state, twice(claimed.run.id));
    expect(getTask(s, "A").failures).toBe(1);
    d.ctx.advance(1000);
    claimed = claimFor(d, s, "A");
    s = d.apply(claimed.state, { kind: "escalate", runId: claimed.run.id, reason: "needs a fixture" });
    expect(getTask(s, "A")).toMatchObject({ status: "blocked", failures: 0, notBefore: null });
    s = toDone(d, s, getTask(s, "A").blockedBy ?? "");
    claimed = claimFor(d, s, "A");
    expect(claimed.run.attempt).toBe(1);
    s = d.apply(claimed.state, twice(claimed.run.id));
    expect(getTask(s, "A")).toMatchObject({ status: "todo", failures: 1 });
  });

  it("runs that keep ending without calling overseer-agent pause the project with one incident, no resolver", () => {
    const d = createDriver();
    const protocol = (runId: string): Command =>
      ({
        ...noTransition(runId),
        detail: "exit 0 without calling overseer-agent. The model's last message: I have created hello.txt.",
        protocolNotFollowed: true,
      }) as Command;
    let s = buildState({ tasks: [task("A"), task("B")] });
    const incidents: string[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const claimed = claimFor(d, s, "A");
      const r = d.step(claimed.state, protocol(claimed.run.id));
      incidents.push(...r.incidents.map((i) => i.kind));
      s = r.state;
      d.ctx.advance(10_000);
    }
    expect(incidents).toEqual(["protocol_not_followed"]);
    expect(resolversOf(s, "A")).toEqual([]);
    expect(getTask(s, "A")).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "configuration_error",
    });
    const card = decisionOf(s, "A");
    expect(card?.title).toBe("The agent does not follow the protocol");
    expect(card?.reason).toContain("3 runs of A in a row ended without calling overseer-agent");
    expect(card?.reason).toContain("The model's last message: I have created hello.txt.");
    expect(s.project.status).toBe("paused");
    expect(s.project.statusReason).toMatch(
      /^protocol_not_followed in A: The agent does not follow the protocol/,
    );
    // After the fix, start alone runs A again.
    s = d.apply(s, { kind: "start-project", by: "op", stage: null, sessionsLimit: null });
    expect(claimFor(d, s, "A").run.attempt).toBe(1);
  });

  it("a successful transition resets the failure count", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    let s = d.apply(claimed.state, noTransition(claimed.run.id));
    d.ctx.advance(1000);
    const next = toReview(d, s, "A");
    s = next.state;
    expect(getTask(s, "A").failures).toBe(0);
  });
});

describe("run violations: a transition the run may not make, or the disk limit → incident and escalation", () => {
  for (const violation of ["forbidden_transition", "disk_limit"] as const) {
    it(`records a ${violation} incident, fails the run and hands the task to a resolver`, () => {
      const d = createDriver();
      const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
      const result = d.step(claimed.state, {
        kind: "run-violation",
        runId: claimed.run.id,
        violation,
        detail: "what the worker saw",
        checkpointRef: "overseer/checkpoint/A/x",
      });
      expect(result.incidents).toEqual([
        expect.objectContaining({
          kind: violation,
          taskId: "A",
          runId: claimed.run.id,
          details: { action: "execute", checkpointRef: "overseer/checkpoint/A/x" },
        }),
      ]);
      expect(result.incidents[0]?.message).toContain("what the worker saw");
      expect(result.state.runs.get(claimed.run.id)?.status).toBe("failed");
      const a = getTask(result.state, "A");
      expect(a.status).toBe("blocked");
      expect(resolversOf(result.state, "A")).toHaveLength(1);
      // Redelivered: applied once.
      expect(
        d.step(result.state, { kind: "run-violation", runId: claimed.run.id, violation, detail: "x" })
          .outcome,
      ).toBe("already_applied");
    });
  }
});

describe("rule 10: scope violation → incident, awaiting remediation, project paused, nothing rolled back", () => {
  it("records the paths, creates an awaiting_input resolver and pauses the project", () => {
    const d = createDriver();
    const base = buildState({
      project: { concurrency: 2 },
      tasks: [task("A", { scope: ["src/a/**"] }), task("B")],
    });
    const claimed = d.apply(base, { kind: "claim" });
    const runA = activeRunOf(claimed, "A");
    const runB = activeRunOf(claimed, "B");
    const result = d.step(claimed, {
      kind: "scope-violation",
      runId: runA.id,
      paths: ["z/secret.txt", "README.md"],
    });
    expect(result.incidents).toEqual([
      expect.objectContaining({
        kind: "scope_violation",
        taskId: "A",
        runId: runA.id,
        details: { paths: ["README.md", "z/secret.txt"], scope: ["src/a/**"] },
      }),
    ]);
    expect(result.state.runs.get(runA.id)?.status).toBe("failed");
    const a = getTask(result.state, "A");
    expect(a.status).toBe("blocked");
    const resolver = getTask(result.state, a.blockedBy ?? "");
    expect(resolver).toMatchObject({ status: "awaiting_input", awaitingReason: "scope_violation" });
    expect(decisionOf(result.state, resolver.id)?.status).toBe("pending");
    expect(result.state.project).toMatchObject({ status: "paused" });
    expect(result.state.project.statusReason).toContain("scope violation");
    // Nothing rolled back: the other run goes on, no run is cancelled.
    expect(result.state.runs.get(runB.id)?.status).toBe("queued");
    expect(result.events.map((e) => e.type)).not.toContain("run.cancelled");
    // Paused: nothing new starts.
    expect(d.step(result.state, { kind: "claim" }).changes.runs).toEqual([]);
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

describe("operator cancel", () => {
  it("cancels the task's active runs and drops the worker's late outcome", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, { kind: "cancel", taskId: "A", by: "op", reason: "not needed" });
    expect(getTask(result.state, "A")).toMatchObject({ status: "cancelled", statusReason: "not needed" });
    expect(result.state.runs.get(claimed.run.id)?.status).toBe("cancelled");
    expect(activeRuns(result.state)).toEqual([]);
    // The worker's late outcome is dropped.
    const late = d.step(result.state, {
      kind: "submit",
      runId: claimed.run.id,
      message: "m",
      commitSha: null,
      branchHead: null,
    });
    expect(late.outcome).toBe("already_applied");
    expectDomainError(
      () => d.step(result.state, { kind: "cancel", taskId: "A", by: "op" }),
      "invalid_transition",
    );
  });

  it("resolves a pending card with the stop option when cancelling an awaiting task", () => {
    const d = createDriver();
    const b = toBlocked(d, buildState({ tasks: [task("A")] }), "A", {
      needsUser: true,
      reason: "which API?",
    });
    const result = d.step(b.state, { kind: "cancel", taskId: b.resolverId, by: "op" });
    expect(getTask(result.state, b.resolverId).status).toBe("cancelled");
    expect(decisionOf(result.state, b.resolverId)).toMatchObject({
      status: "resolved",
      selectedOption: STOP_OPTION_ID,
    });
  });

  it("cancelling a resolver asks the operator how its blocked original continues", () => {
    const d = createDriver();
    const b = toBlocked(d, buildState({ tasks: [task("A")] }), "A");
    const s = d.apply(b.state, { kind: "cancel", taskId: b.resolverId, by: "op" });
    expect(getTask(s, "A")).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "other",
      blockedBy: null,
    });
    expect(decisionOf(s, "A")?.status).toBe("pending");
    const resumed = d.apply(s, { kind: "answer", taskId: "A", text: "do it another way", by: "op" });
    expect(getTask(resumed, "A").status).toBe("todo");
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

describe("redelivery: a run outcome applied twice is a no-op", () => {
  const outcomes: Record<string, (runId: string) => Command> = {
    "run-started": (runId) => ({ kind: "run-started", runId, workerId: "w" }),
    submit: (runId) => ({ kind: "submit", runId, message: "m", commitSha: null, branchHead: null }),
    escalate: (runId) => ({ kind: "escalate", runId, reason: "r" }),
    "escalate needing the user": (runId) => ({ kind: "escalate", runId, reason: "r", needsUser: true }),
    timeout: (runId) => ({ kind: "timeout", runId, stalled: false, seconds: 5 }),
    "no-transition": (runId) => ({
      kind: "no-transition",
      runId,
      detail: "d",
      crashed: false,
      maxAttempts: 3,
      backoffMs: 10,
    }),
    "run-misconfigured": (runId) => ({
      kind: "run-misconfigured",
      runId,
      reason: "harness_not_configured",
      message: "m",
    }),
    "scope-violation": (runId) => ({ kind: "scope-violation", runId, paths: ["x"] }),
  };

  for (const [name, make] of Object.entries(outcomes)) {
    it(`${name} (execute run)`, () => {
      const d = createDriver();
      const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
      const first = d.step(claimed.state, make(claimed.run.id));
      expect(first.outcome).toBe("applied");
      const snapshot = structuredClone(first.state);
      const second = d.step(first.state, make(claimed.run.id));
      expect(second.outcome).toBe("already_applied");
      expect(second.state).toBe(first.state);
      expect(second.state).toEqual(snapshot);
      expect(second.events).toEqual([]);
      expect(second.incidents).toEqual([]);
      expect(second.changes).toMatchObject({ project: null, tasks: [], runs: [], decisions: [] });
    });
  }

  for (const name of ["approve", "reject"] as const) {
    it(`${name} (review run)`, () => {
      const d = createDriver();
      const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
      const review = claimFor(d, reviewed.state, "A");
      const cmd: Command =
        name === "approve"
          ? { kind: "approve", runId: review.run.id, landedSha: "x", landedBranch: "main" }
          : { kind: "reject", runId: review.run.id, feedback: "f" };
      const first = d.step(review.state, cmd);
      const second = d.step(first.state, cmd);
      expect(second.outcome).toBe("already_applied");
      expect(second.state).toBe(first.state);
      expect(second.events).toEqual([]);
      // A different outcome for the same (ended) run is dropped too.
      expect(d.step(first.state, { kind: "escalate", runId: review.run.id, reason: "late" }).outcome).toBe(
        "already_applied",
      );
    });
  }
});

// ---------------------------------------------------------------------------------------

/** A randomHex that hands out `values` in order, then fresh counter values. */
function scripted(values: readonly string[]): () => string {
  let i = 0;
  return () => values[i++] ?? (0x1000 + i).toString(16).padStart(12, "0");
}

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
