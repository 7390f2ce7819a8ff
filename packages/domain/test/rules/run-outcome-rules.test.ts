/**
 * Rules 2 and 3 and redelivery: a run's submit, approve, reject or failed landing, each applied once.
 * The flow rules of docs/state-machine.md, one `describe` per rule, against the pure state
 * machine (the handlers in src/transitions/). Each test builds a small project, drives it with
 * commands and checks the resulting state, events, incidents and decision cards.
 */
import { describe, expect, it } from "vitest";
import { AGENT_ID_PATTERN, type Command, type ProjectState } from "../../src/index.ts";
import { expectDomainError, scripted } from "../support/rule-helpers.ts";
import {
  activeRunOf,
  apply,
  buildState,
  claimFor,
  createDriver,
  decisionOf,
  getTask,
  START_MS,
  task,
  toReview,
} from "../support/state-builder.ts";

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
